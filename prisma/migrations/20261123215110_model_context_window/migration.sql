-- AlterTable
ALTER TABLE "Model" ADD COLUMN     "contextWindowTokens" INTEGER NOT NULL DEFAULT 128000;
