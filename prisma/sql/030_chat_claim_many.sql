-- A batch of claims in one statement and one transaction (group commit), in the order given: each is
-- chat_claim, or chat_claim_org for a claim that names `organizationId`. `p_claims` is a JSON array of objects with the fields named in the column list below; the
-- callers sort them by user, so concurrent batches take the users' quota rows in the same order. Answers,
-- for claim n (from 1), chat_claim's row. ROWS: a batch holds a few claims (the default estimate, 1,000, made
-- the planner hash whole tables to join the answer). enable_seqscan off: the plans of the statements inside
-- (and of the functions they call) are made once per connection and kept; made while the tables were small
-- they scanned them whole, ever after, where autovacuum never analyzes (docs/adr/0066).
CREATE OR REPLACE FUNCTION "chat_claim_many"(p_claims jsonb) RETURNS TABLE (
    n integer,
    outcome text,
    id uuid,
    fingerprint text,
    status text,
    "conversationId" uuid,
    "responseBody" text,
    "errorCode" text,
    "modelId" text,
    "inputTokens" integer,
    "outputTokens" integer,
    credits integer
)
LANGUAGE plpgsql ROWS 8 SET enable_seqscan = off AS $$
DECLARE
    v_claim record;
    v_row record;
    v_claimed uuid[] := '{}';
    v_claimed_ms integer[] := '{}';
BEGIN
    FOR v_claim IN
        SELECT c.*
          FROM ROWS FROM (jsonb_to_recordset(p_claims) AS (
                   id uuid, "userId" uuid, "idempotencyKey" text, fingerprint text, "conversationId" uuid,
                   "newConversation" boolean, title text, "modelId" text, "skillId" uuid, "skillVersionId" uuid,
                   "usageDay" date, "reservedCredits" integer, "leaseMs" integer, "organizationId" uuid))
               WITH ORDINALITY AS c(id, "userId", "idempotencyKey", fingerprint, "conversationId", "newConversation",
                                    title, "modelId", "skillId", "skillVersionId", "usageDay", "reservedCredits",
                                    "leaseMs", "organizationId", k)
         ORDER BY c.k
    LOOP
        -- Each answers exactly one row.
        IF v_claim."organizationId" IS NULL THEN
            SELECT r.* INTO v_row
              FROM "chat_claim"(v_claim.id, v_claim."userId", v_claim."idempotencyKey", v_claim.fingerprint,
                                v_claim."conversationId", v_claim."newConversation", v_claim.title,
                                v_claim."modelId", v_claim."skillId", v_claim."skillVersionId",
                                v_claim."usageDay", v_claim."reservedCredits",
                                clock_timestamp() + v_claim."leaseMs" * interval '1 millisecond') r;
        ELSE
            SELECT r.* INTO v_row
              FROM "chat_claim_org"(v_claim.id, v_claim."userId", v_claim."organizationId", v_claim."idempotencyKey",
                                    v_claim.fingerprint, v_claim."conversationId", v_claim."newConversation",
                                    v_claim.title, v_claim."modelId", v_claim."skillId", v_claim."skillVersionId",
                                    v_claim."usageDay", v_claim."reservedCredits",
                                    clock_timestamp() + v_claim."leaseMs" * interval '1 millisecond') r;
        END IF;
        IF v_row.outcome = 'claimed' THEN
            v_claimed := v_claimed || v_claim.id;
            v_claimed_ms := v_claimed_ms || v_claim."leaseMs";
        END IF;
        n := v_claim.k;
        outcome := v_row.outcome;
        id := v_row.id;
        fingerprint := v_row.fingerprint;
        status := v_row.status;
        "conversationId" := v_row."conversationId";
        "responseBody" := v_row."responseBody";
        "errorCode" := v_row."errorCode";
        "modelId" := v_row."modelId";
        "inputTokens" := v_row."inputTokens";
        "outputTokens" := v_row."outputTokens";
        credits := v_row.credits;
        RETURN NEXT;
    END LOOP;
    -- The commit follows at once. Leases that lost more than a tenth of their time while the batch waited
    -- start again now (most batches wait on nothing and write nothing here).
    UPDATE "ChatRequest" r
       SET "leaseExpiresAt" = clock_timestamp() + l.ms * interval '1 millisecond'
      FROM unnest(v_claimed, v_claimed_ms) AS l(run, ms)
     WHERE r.id = l.run
       AND r."leaseExpiresAt" < clock_timestamp() + l.ms * interval '0.9 millisecond';
END;
$$;
