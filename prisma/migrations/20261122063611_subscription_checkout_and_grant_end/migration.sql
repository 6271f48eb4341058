-- AlterTable
ALTER TABLE "Subscription" ADD COLUMN     "checkoutId" UUID,
ADD COLUMN     "grantsUntil" TIMESTAMPTZ(3);

-- CreateIndex
CREATE UNIQUE INDEX "Subscription_checkoutId_key" ON "Subscription"("checkoutId");

-- CreateIndex
CREATE INDEX "Subscription_grantsUntil_idx" ON "Subscription"("grantsUntil");

-- AddForeignKey
ALTER TABLE "Subscription" ADD CONSTRAINT "Subscription_checkoutId_fkey" FOREIGN KEY ("checkoutId") REFERENCES "Checkout"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
