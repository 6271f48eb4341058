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
    v_step text;
BEGIN
    RETURN QUERY SELECT * FROM "chat_claim_taken"(p_user, p_key);
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
        RETURN QUERY SELECT * FROM "chat_claim_answer"('model_not_allowed');
        RETURN;
    END IF;

    v_step := "chat_claim_request"(p_id, p_user, NULL, p_key, p_fingerprint, p_conversation, p_new_conversation,
                                   p_title, p_model, p_skill, p_skill_version, p_day, p_credits, p_lease_until);
    IF v_step = 'taken' THEN
        RETURN QUERY SELECT * FROM "chat_claim_taken"(p_user, p_key);
        RETURN;
    ELSIF v_step <> 'claimed' THEN
        RETURN QUERY SELECT * FROM "chat_claim_answer"(v_step);
        RETURN;
    END IF;

    -- Last, so the user's DailyUsage row stays locked only from here to the commit.
    INSERT INTO "DailyUsage" AS d ("userId", day, reserved)
    SELECT p_user, p_day, p_credits WHERE p_credits <= v_limit
    ON CONFLICT ("userId", day) DO UPDATE SET reserved = d.reserved + EXCLUDED.reserved
        WHERE d.used + d.reserved + EXCLUDED.reserved <= v_limit;
    IF NOT FOUND THEN
        PERFORM "chat_claim_undo"(p_id, p_conversation, p_new_conversation);
        RETURN QUERY SELECT * FROM "chat_claim_answer"('quota_exceeded');
        RETURN;
    END IF;

    RETURN QUERY SELECT * FROM "chat_claim_answer"('claimed', p_id, p_fingerprint, p_conversation, p_model);
END;
$$;
