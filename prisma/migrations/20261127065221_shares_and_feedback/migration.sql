-- CreateEnum
CREATE TYPE "FeedbackRating" AS ENUM ('up', 'down');

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "copiedFrom" JSONB;

-- CreateTable
CREATE TABLE "ConversationShare" (
    "id" TEXT NOT NULL,
    "conversationId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "title" TEXT NOT NULL,
    "snapshot" JSONB NOT NULL,
    "messageCount" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ConversationShare_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MessageFeedback" (
    "messageId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "rating" "FeedbackRating" NOT NULL,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "comment" TEXT,
    "modelId" TEXT,
    "skillId" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MessageFeedback_pkey" PRIMARY KEY ("messageId")
);

-- CreateIndex
CREATE UNIQUE INDEX "ConversationShare_conversationId_key" ON "ConversationShare"("conversationId");

-- CreateIndex
CREATE INDEX "ConversationShare_userId_createdAt_conversationId_idx" ON "ConversationShare"("userId", "createdAt" DESC, "conversationId" DESC);

-- CreateIndex
CREATE INDEX "MessageFeedback_updatedAt_idx" ON "MessageFeedback"("updatedAt");

-- CreateIndex
CREATE INDEX "MessageFeedback_modelId_updatedAt_idx" ON "MessageFeedback"("modelId", "updatedAt");

-- CreateIndex
CREATE INDEX "MessageFeedback_userId_idx" ON "MessageFeedback"("userId");

-- CreateIndex
CREATE INDEX "MessageFeedback_skillId_idx" ON "MessageFeedback"("skillId");

-- AddForeignKey
ALTER TABLE "ConversationShare" ADD CONSTRAINT "ConversationShare_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "Conversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ConversationShare" ADD CONSTRAINT "ConversationShare_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MessageFeedback" ADD CONSTRAINT "MessageFeedback_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MessageFeedback" ADD CONSTRAINT "MessageFeedback_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MessageFeedback" ADD CONSTRAINT "MessageFeedback_skillId_fkey" FOREIGN KEY ("skillId") REFERENCES "Skill"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Written here, not only in the service: a link id is 144 random bits (24 base64url characters); a rating
-- carries at most 10 tags and a comment of at most 2000 characters.
ALTER TABLE "ConversationShare" ADD CONSTRAINT "ConversationShare_id_format" CHECK ("id" ~ '^[A-Za-z0-9_-]{24}$');
ALTER TABLE "MessageFeedback" ADD CONSTRAINT "MessageFeedback_tags_bounded" CHECK (cardinality("tags") <= 10);
ALTER TABLE "MessageFeedback" ADD CONSTRAINT "MessageFeedback_comment_bounded" CHECK (char_length("comment") <= 2000);
