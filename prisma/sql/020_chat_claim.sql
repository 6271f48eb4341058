-- One claim (chat_claim_many runs it for each claim of a batch): the request that holds the key when it is
-- taken; otherwise the plan's access to the model, the conversation (created, or checked to be the
-- user's), the request row and the quota reservation (used + reserved + credits <= the day's limit), in
-- this order. A refusal leaves nothing behind: the key stays unused.
CREATE OR REPLACE FUNCTION "chat_claim"(
    p_id uuid,
    p_user uuid,
    p_key text,
    p_fingerprint text,
    p_conversation uuid,
    p_new_conversation boolean,
    p_title text,
    p_model text,
    p_skill uuid,
    p_skill_version uuid,
    p_day date,
    p_credits integer,
    p_lease_until timestamptz
) RETURNS TABLE (
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
LANGUAGE plpgsql AS $$
DECLARE
    v_limit bigint;
BEGIN
    RETURN QUERY
        SELECT 'taken'::text, v.id, v.fingerprint, v.status, v."conversationId", v."responseBody", v."errorCode",
               v."modelId", v."inputTokens", v."outputTokens", v.credits
          FROM "chat_request_by_key"(p_user, p_key) v;
    IF FOUND THEN
        RETURN;
    END IF;

    SELECT p."dailyCredits" + COALESCE((
               SELECT SUM(g.credits) FROM "CreditGrant" g
               WHERE g."userId" = p_user AND g."firstDay" <= p_day AND g."lastDay" >= p_day), 0)
      INTO v_limit
      FROM "User" u
      JOIN "Plan" p ON p.code = u."planCode"
      JOIN "PlanModel" pm ON pm."planCode" = p.code AND pm."modelId" = p_model
      JOIN "Model" m ON m.id = pm."modelId" AND m.active
     WHERE u.id = p_user;
    IF v_limit IS NULL THEN
        RETURN QUERY SELECT 'model_not_allowed'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::int, NULL::int, NULL::int;
        RETURN;
    END IF;

    IF p_new_conversation THEN
        INSERT INTO "Conversation" (id, "userId", title, "skillId", "skillVersionId", "createdAt", "updatedAt")
        VALUES (p_conversation, p_user, p_title, p_skill, p_skill_version, now(), now());
    ELSE
        PERFORM 1 FROM "Conversation" c WHERE c.id = p_conversation AND c."userId" = p_user FOR KEY SHARE;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::int, NULL::int, NULL::int;
            RETURN;
        END IF;
    END IF;

    INSERT INTO "ChatRequest" AS r (id, "userId", "idempotencyKey", fingerprint, status, "conversationId", "modelId",
                                    "skillId", "skillVersionId", "usageDay", "reservedCredits", "leaseExpiresAt")
    VALUES (p_id, p_user, p_key, p_fingerprint, 'streaming', p_conversation, p_model,
            p_skill, p_skill_version, p_day, p_credits, p_lease_until)
    ON CONFLICT ("userId", "idempotencyKey") DO NOTHING;
    IF NOT FOUND THEN
        -- Another request claimed the key first (it committed while this one waited on it): nothing of this
        -- claim remains, and its row goes back so the caller can replay or join it.
        IF p_new_conversation THEN
            DELETE FROM "Conversation" WHERE "Conversation".id = p_conversation;
        END IF;
        RETURN QUERY
            SELECT 'taken'::text, v.id, v.fingerprint, v.status, v."conversationId", v."responseBody", v."errorCode",
                   v."modelId", v."inputTokens", v."outputTokens", v.credits
              FROM "chat_request_by_key"(p_user, p_key) v;
        RETURN;
    END IF;

    -- Last, so the user's DailyUsage row stays locked only from here to the commit.
    INSERT INTO "DailyUsage" AS d ("userId", day, reserved)
    SELECT p_user, p_day, p_credits WHERE p_credits <= v_limit
    ON CONFLICT ("userId", day) DO UPDATE SET reserved = d.reserved + EXCLUDED.reserved
        WHERE d.used + d.reserved + EXCLUDED.reserved <= v_limit;
    IF NOT FOUND THEN
        DELETE FROM "ChatRequest" WHERE "ChatRequest".id = p_id;
        IF p_new_conversation THEN
            DELETE FROM "Conversation" WHERE "Conversation".id = p_conversation;
        END IF;
        RETURN QUERY SELECT 'quota_exceeded'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::int, NULL::int, NULL::int;
        RETURN;
    END IF;

    RETURN QUERY SELECT 'claimed'::text, p_id, p_fingerprint, 'streaming'::text, p_conversation, NULL::text, NULL::text, p_model, NULL::int, NULL::int, NULL::int;
END;
$$;
