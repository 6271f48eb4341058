-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "SubscriptionStatus" ADD VALUE 'incomplete';
ALTER TYPE "SubscriptionStatus" ADD VALUE 'paused';

-- AlterTable
ALTER TABLE "User" ADD COLUMN     "planSubscriptionId" UUID;

-- CreateIndex
CREATE UNIQUE INDEX "User_planSubscriptionId_key" ON "User"("planSubscriptionId");

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_planSubscriptionId_fkey" FOREIGN KEY ("planSubscriptionId") REFERENCES "Subscription"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- One pending checkout per user, plan and provider, so a double click finds the first one instead of opening a
-- second provider session. Partial indexes cannot be written in schema.prisma, so this one lives only here.
CREATE UNIQUE INDEX "Checkout_one_pending_per_user_plan_provider" ON "Checkout"("userId", "planCode", "provider") WHERE "status" = 'pending';
