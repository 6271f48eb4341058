-- CreateTable
CREATE TABLE "ToolExecution" (
    "id" UUID NOT NULL,
    "chatRequestId" UUID NOT NULL,
    "conversationId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "callIndex" INTEGER NOT NULL,
    "callId" TEXT NOT NULL,
    "toolId" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "content" TEXT,
    "textOffset" INTEGER NOT NULL,
    "startedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ToolExecution_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ToolExecution_conversationId_idx" ON "ToolExecution"("conversationId");

-- CreateIndex
CREATE INDEX "ToolExecution_status_startedAt_idx" ON "ToolExecution"("status", "startedAt");

-- CreateIndex
CREATE UNIQUE INDEX "ToolExecution_chatRequestId_step_callIndex_key" ON "ToolExecution"("chatRequestId", "step", "callIndex");

-- AddForeignKey
ALTER TABLE "ToolExecution" ADD CONSTRAINT "ToolExecution_chatRequestId_fkey" FOREIGN KEY ("chatRequestId") REFERENCES "ChatRequest"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ToolExecution" ADD CONSTRAINT "ToolExecution_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "Conversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ToolExecution" ADD CONSTRAINT "ToolExecution_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Not expressible in the Prisma schema: the statuses an execution goes through.
ALTER TABLE "ToolExecution" ADD CONSTRAINT "ToolExecution_status_values"
    CHECK ("status" IN ('running', 'ok', 'error', 'denied', 'timeout', 'unknown'));
