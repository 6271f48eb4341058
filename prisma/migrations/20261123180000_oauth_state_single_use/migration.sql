-- CreateTable
CREATE TABLE "OAuthStateUse" (
    "stateHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "OAuthStateUse_pkey" PRIMARY KEY ("stateHash")
);

-- CreateIndex
CREATE INDEX "OAuthStateUse_expiresAt_idx" ON "OAuthStateUse"("expiresAt");
