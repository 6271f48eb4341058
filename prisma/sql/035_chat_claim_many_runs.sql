-- The claim as the service sends it: chat_claim_many's rows, and for a key already taken the stored run's
-- later columns (the answering model, the model billed, the cached input tokens), which chat_claim_many's
-- row type predates (a function's row type cannot change in place). A function of its own so that its
-- join is planned with enable_seqscan off and that plan kept: as a prepared statement of the service, its
-- plan was made once per connection while the tables were small and then hashed all of ChatRequest and
-- LedgerEntry for every claim where autovacuum never analyzes (docs/adr/0066). Only a taken key is looked
-- up (a NULL key for the other outcomes finds nothing at once).
CREATE OR REPLACE FUNCTION "chat_claim_many_runs"(p_claims jsonb) RETURNS TABLE (
    n integer,
    outcome text,
    id uuid,
    fingerprint text,
    status text,
    "conversationId" uuid,
    "responseBody" text,
    "errorCode" text,
    "modelId" text,
    "answeredModelId" text,
    "billedModelId" text,
    "inputTokens" integer,
    "cachedInputTokens" integer,
    "outputTokens" integer,
    credits integer
)
LANGUAGE plpgsql ROWS 8 SET enable_seqscan = off AS $$
BEGIN
    RETURN QUERY
        SELECT c.n, c.outcome, c.id, c.fingerprint, c.status, c."conversationId", c."responseBody", c."errorCode",
               c."modelId", v."answeredModelId", v."billedModelId", c."inputTokens", v."cachedInputTokens",
               c."outputTokens", c.credits
          FROM "chat_claim_many"(p_claims) c
          LEFT JOIN "chat_stored_runs" v ON v.id = CASE WHEN c.outcome = 'taken' THEN c.id END;
END;
$$;
