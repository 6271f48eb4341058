-- CreateTable
CREATE TABLE "ChatRequestFile" (
    "chatRequestId" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "fileId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "kind" "FileKind" NOT NULL,

    CONSTRAINT "ChatRequestFile_pkey" PRIMARY KEY ("chatRequestId","position")
);

-- AddForeignKey
ALTER TABLE "ChatRequestFile" ADD CONSTRAINT "ChatRequestFile_chatRequestId_fkey" FOREIGN KEY ("chatRequestId") REFERENCES "ChatRequest"("id") ON DELETE CASCADE ON UPDATE CASCADE;
