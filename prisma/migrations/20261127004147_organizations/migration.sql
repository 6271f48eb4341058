-- CreateEnum
CREATE TYPE "OrgRole" AS ENUM ('owner', 'admin', 'member');

-- AlterTable
ALTER TABLE "ChatRequest" ADD COLUMN     "organizationId" UUID;

-- AlterTable
ALTER TABLE "Checkout" ADD COLUMN     "organizationId" UUID,
ADD COLUMN     "seats" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "LedgerEntry" ADD COLUMN     "organizationId" UUID;

-- AlterTable
ALTER TABLE "Subscription" ADD COLUMN     "organizationId" UUID,
ADD COLUMN     "seats" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "Organization" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "planCode" TEXT NOT NULL DEFAULT 'free',
    "seats" INTEGER NOT NULL DEFAULT 0,
    "planSubscriptionId" UUID,
    "planSetByAdmin" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Organization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OrgMember" (
    "organizationId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "role" "OrgRole" NOT NULL,
    "dailyCreditLimit" INTEGER,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OrgMember_pkey" PRIMARY KEY ("organizationId","userId")
);

-- CreateTable
CREATE TABLE "OrgInvitation" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "role" "OrgRole" NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "invitedById" UUID,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "acceptedAt" TIMESTAMPTZ(3),
    "acceptedById" UUID,
    "revokedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OrgInvitation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OrgDailyUsage" (
    "organizationId" UUID NOT NULL,
    "day" DATE NOT NULL,
    "used" INTEGER NOT NULL DEFAULT 0,
    "reserved" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "OrgDailyUsage_pkey" PRIMARY KEY ("organizationId","day")
);

-- CreateTable
CREATE TABLE "OrgMemberDailyUsage" (
    "organizationId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "day" DATE NOT NULL,
    "used" INTEGER NOT NULL DEFAULT 0,
    "reserved" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "OrgMemberDailyUsage_pkey" PRIMARY KEY ("organizationId","userId","day")
);

-- CreateIndex
CREATE UNIQUE INDEX "Organization_planSubscriptionId_key" ON "Organization"("planSubscriptionId");

-- CreateIndex
CREATE INDEX "OrgMember_userId_idx" ON "OrgMember"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "OrgInvitation_tokenHash_key" ON "OrgInvitation"("tokenHash");

-- CreateIndex
CREATE INDEX "OrgInvitation_organizationId_createdAt_idx" ON "OrgInvitation"("organizationId", "createdAt");

-- CreateIndex
CREATE INDEX "LedgerEntry_organizationId_createdAt_idx" ON "LedgerEntry"("organizationId", "createdAt");

-- CreateIndex
CREATE INDEX "Skill_organizationId_createdAt_id_idx" ON "Skill"("organizationId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Subscription_organizationId_idx" ON "Subscription"("organizationId");

-- AddForeignKey
ALTER TABLE "Skill" ADD CONSTRAINT "Skill_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Organization" ADD CONSTRAINT "Organization_planCode_fkey" FOREIGN KEY ("planCode") REFERENCES "Plan"("code") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Organization" ADD CONSTRAINT "Organization_planSubscriptionId_fkey" FOREIGN KEY ("planSubscriptionId") REFERENCES "Subscription"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrgMember" ADD CONSTRAINT "OrgMember_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrgMember" ADD CONSTRAINT "OrgMember_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrgInvitation" ADD CONSTRAINT "OrgInvitation_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrgDailyUsage" ADD CONSTRAINT "OrgDailyUsage_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrgMemberDailyUsage" ADD CONSTRAINT "OrgMemberDailyUsage_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrgMemberDailyUsage" ADD CONSTRAINT "OrgMemberDailyUsage_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Written by hand: the bounds the service relies on, in the database too.
ALTER TABLE "Organization" ADD CONSTRAINT "Organization_seats_nonnegative" CHECK ("seats" >= 0),
    ADD CONSTRAINT "Organization_name_length" CHECK (char_length("name") BETWEEN 1 AND 100);
ALTER TABLE "OrgMember" ADD CONSTRAINT "OrgMember_dailyCreditLimit_nonnegative" CHECK ("dailyCreditLimit" IS NULL OR "dailyCreditLimit" >= 0);
ALTER TABLE "OrgDailyUsage" ADD CONSTRAINT "OrgDailyUsage_used_nonnegative" CHECK ("used" >= 0),
    ADD CONSTRAINT "OrgDailyUsage_reserved_nonnegative" CHECK ("reserved" >= 0);
ALTER TABLE "OrgMemberDailyUsage" ADD CONSTRAINT "OrgMemberDailyUsage_used_nonnegative" CHECK ("used" >= 0),
    ADD CONSTRAINT "OrgMemberDailyUsage_reserved_nonnegative" CHECK ("reserved" >= 0);
ALTER TABLE "Checkout" ADD CONSTRAINT "Checkout_seats_positive" CHECK ("seats" >= 1);
ALTER TABLE "Subscription" ADD CONSTRAINT "Subscription_seats_nonnegative" CHECK ("seats" >= 0);
-- The pending invitations of an organization are listed, and one address has at most one pending at a time.
CREATE UNIQUE INDEX "OrgInvitation_pending_email_key" ON "OrgInvitation"("organizationId", lower("email"))
    WHERE "acceptedAt" IS NULL AND "revokedAt" IS NULL;
