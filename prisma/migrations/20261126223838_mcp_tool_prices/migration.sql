-- AlterTable
ALTER TABLE "McpServer" ADD COLUMN     "toolPrices" JSONB NOT NULL DEFAULT '{}';
