-- CreateEnum
CREATE TYPE "FileTextStatus" AS ENUM ('pending', 'ready', 'failed');

-- AlterTable
ALTER TABLE "File" ADD COLUMN     "textChars" INTEGER,
ADD COLUMN     "textClaimedUntil" TIMESTAMPTZ(3),
ADD COLUMN     "textError" TEXT,
ADD COLUMN     "textPages" INTEGER,
ADD COLUMN     "textStatus" "FileTextStatus" NOT NULL DEFAULT 'pending';

-- CreateTable
CREATE TABLE "FileChunk" (
    "fileId" UUID NOT NULL,
    "index" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "tsv" tsvector NOT NULL,

    CONSTRAINT "FileChunk_pkey" PRIMARY KEY ("fileId","index")
);

-- CreateIndex
CREATE INDEX "FileChunk_tsv_idx" ON "FileChunk" USING GIN ("tsv");

-- CreateIndex
CREATE INDEX "File_textStatus_createdAt_idx" ON "File"("textStatus", "createdAt");

-- AddForeignKey
ALTER TABLE "FileChunk" ADD CONSTRAINT "FileChunk_fileId_fkey" FOREIGN KEY ("fileId") REFERENCES "File"("id") ON DELETE CASCADE ON UPDATE CASCADE;
