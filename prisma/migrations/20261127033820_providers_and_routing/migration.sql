-- Providers and routing (docs/adr/0063-providers-and-routing.md): a model names its endpoint and its
-- fallbacks and may price cached input apart; a run records the fallback that answered; a ledger entry
-- the cached input tokens and the model asked for when a fallback answered.

-- AlterTable
ALTER TABLE "ChatRequest" ADD COLUMN     "answeredModelId" TEXT;

-- AlterTable
ALTER TABLE "LedgerEntry" ADD COLUMN     "cachedInputTokens" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "requestedModelId" TEXT;

-- NOT VALID, then VALIDATE: the check of the existing rows does not lock out settlements meanwhile.
ALTER TABLE "LedgerEntry" ADD CONSTRAINT "LedgerEntry_cachedInputTokens_check"
    CHECK ("cachedInputTokens" >= 0 AND "cachedInputTokens" <= "inputTokens") NOT VALID;
ALTER TABLE "LedgerEntry" VALIDATE CONSTRAINT "LedgerEntry_cachedInputTokens_check";

-- AlterTable: the models synced before this release used the built-in endpoint named by their provider.
ALTER TABLE "Model" ADD COLUMN     "creditsPer1kCachedInput" INTEGER,
ADD COLUMN     "endpoint" TEXT,
ADD COLUMN     "fallbacks" TEXT[] DEFAULT ARRAY[]::TEXT[];

UPDATE "Model" SET "endpoint" = "provider";
ALTER TABLE "Model" ALTER COLUMN "endpoint" SET NOT NULL;

ALTER TABLE "Model" ADD CONSTRAINT "Model_creditsPer1kCachedInput_check"
    CHECK ("creditsPer1kCachedInput" IS NULL OR "creditsPer1kCachedInput" >= 0);
