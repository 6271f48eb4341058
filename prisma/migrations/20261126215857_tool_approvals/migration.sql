-- CreateTable
CREATE TABLE "ToolApproval" (
    "id" UUID NOT NULL,
    "executionId" UUID NOT NULL,
    "chatRequestId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "decidedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ToolApproval_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ToolApproval_executionId_key" ON "ToolApproval"("executionId");

-- CreateIndex
CREATE INDEX "ToolApproval_chatRequestId_idx" ON "ToolApproval"("chatRequestId");

-- AddForeignKey
ALTER TABLE "ToolApproval" ADD CONSTRAINT "ToolApproval_executionId_fkey" FOREIGN KEY ("executionId") REFERENCES "ToolExecution"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ToolApproval" ADD CONSTRAINT "ToolApproval_chatRequestId_fkey" FOREIGN KEY ("chatRequestId") REFERENCES "ChatRequest"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ToolApproval" ADD CONSTRAINT "ToolApproval_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Not expressible in the Prisma schema: the statuses an approval goes through.
ALTER TABLE "ToolApproval" ADD CONSTRAINT "ToolApproval_status_values"
    CHECK ("status" IN ('pending', 'approved', 'denied', 'expired'));
