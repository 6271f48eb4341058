-- AlterTable
ALTER TABLE "Subscription" ADD COLUMN     "pastDueSince" TIMESTAMPTZ(3);
