-- AlterTable
ALTER TABLE "LedgerEntry" ADD COLUMN     "steps" JSONB,
ADD COLUMN     "toolCalls" JSONB;
