-- AlterTable
ALTER TABLE "File" ADD COLUMN     "textAttempts" INTEGER NOT NULL DEFAULT 0;
