-- A run's lease is counted by the database's clock from the end of its claim, not from a time the
-- instance read before the claim waited (on other claims' quota row locks, under load): the claims take
-- the lease as a duration, and a batch whose claims waited refreshes their leases just before it commits.

DROP FUNCTION "chat_claim_many"(uuid[], uuid[], text[], text[], uuid[], boolean[], text[], text[], uuid[], uuid[], date[], integer[], timestamptz[]);

-- As before, except p_lease_ms: each claim's lease in milliseconds.
CREATE FUNCTION "chat_claim_many"(
    p_ids uuid[],
    p_users uuid[],
    p_keys text[],
    p_fingerprints text[],
    p_conversations uuid[],
    p_new_conversations boolean[],
    p_titles text[],
    p_models text[],
    p_skills uuid[],
    p_skill_versions uuid[],
    p_days date[],
    p_credits integer[],
    p_lease_ms integer[]
) RETURNS TABLE (
    n integer,
    outcome text,
    id uuid,
    fingerprint text,
    status text,
    "conversationId" uuid,
    "responseBody" text,
    "errorCode" text
)
LANGUAGE plpgsql AS $$
DECLARE
    v_row record;
    v_claimed uuid[] := '{}';
    v_claimed_ms integer[] := '{}';
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
        FOR v_row IN
            SELECT c.* FROM "chat_claim"(p_ids[i], p_users[i], p_keys[i], p_fingerprints[i], p_conversations[i],
                                         p_new_conversations[i], p_titles[i], p_models[i], p_skills[i],
                                         p_skill_versions[i], p_days[i], p_credits[i],
                                         clock_timestamp() + p_lease_ms[i] * interval '1 millisecond') c
        LOOP
            IF v_row.outcome = 'claimed' THEN
                v_claimed := v_claimed || p_ids[i];
                v_claimed_ms := v_claimed_ms || p_lease_ms[i];
            END IF;
            n := i;
            outcome := v_row.outcome;
            id := v_row.id;
            fingerprint := v_row.fingerprint;
            status := v_row.status;
            "conversationId" := v_row."conversationId";
            "responseBody" := v_row."responseBody";
            "errorCode" := v_row."errorCode";
            RETURN NEXT;
        END LOOP;
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
