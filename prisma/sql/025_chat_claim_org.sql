-- One claim billed to an organization's pool (docs/adr/0062-organizations.md); chat_claim_many runs it for
-- a claim that names `organizationId`. As chat_claim, with the organization in place of the user: the
-- request that holds the key when it is taken; otherwise the caller's membership (kept, FOR KEY SHARE, so
-- a removal waits for this claim and the next claim sees it), a paid plan, its access to the model, the
-- conversation, the request row and two conditional reservations, the pool's day first (the plan's daily
-- credits times the seats) then the member's day (their cap, when set). A refusal leaves nothing behind: the key stays unused.
CREATE OR REPLACE FUNCTION "chat_claim_org"(
    p_id uuid,
    p_user uuid,
    p_org uuid,
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
    v_cap integer;
    v_plan text;
    v_pool bigint;
    v_step text;
BEGIN
    RETURN QUERY SELECT * FROM "chat_claim_taken"(p_user, p_key);
    IF FOUND THEN
        RETURN;
    END IF;

    -- The organization before its member row, as membership changes take them (no circular wait).
    SELECT o."planCode", p."dailyCredits"::bigint * o.seats INTO v_plan, v_pool
      FROM "Organization" o JOIN "Plan" p ON p.code = o."planCode"
     WHERE o.id = p_org
       FOR KEY SHARE OF o;
    SELECT m."dailyCreditLimit" INTO v_cap
      FROM "OrgMember" m
     WHERE m."organizationId" = p_org AND m."userId" = p_user
       FOR KEY SHARE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT * FROM "chat_claim_answer"('not_member');
        RETURN;
    END IF;
    IF v_plan = 'free' OR v_pool <= 0 THEN
        RETURN QUERY SELECT * FROM "chat_claim_answer"('org_plan_required');
        RETURN;
    END IF;
    PERFORM 1 FROM "PlanModel" pm JOIN "Model" md ON md.id = pm."modelId" AND md.active
     WHERE pm."planCode" = v_plan AND pm."modelId" = p_model;
    IF NOT FOUND THEN
        RETURN QUERY SELECT * FROM "chat_claim_answer"('model_not_allowed');
        RETURN;
    END IF;

    v_step := "chat_claim_request"(p_id, p_user, p_org, p_key, p_fingerprint, p_conversation, p_new_conversation,
                                   p_title, p_model, p_skill, p_skill_version, p_day, p_credits, p_lease_until);
    IF v_step = 'taken' THEN
        RETURN QUERY SELECT * FROM "chat_claim_taken"(p_user, p_key);
        RETURN;
    ELSIF v_step <> 'claimed' THEN
        RETURN QUERY SELECT * FROM "chat_claim_answer"(v_step);
        RETURN;
    END IF;

    -- Last, so the two usage rows stay locked only from here to the commit: the pool's, then the member's
    -- (every claim, settlement and growth takes them in that order, and batches are sorted by organization
    -- and user, so concurrent batches never wait on each other in a circle).
    INSERT INTO "OrgDailyUsage" AS d ("organizationId", day, reserved)
    SELECT p_org, p_day, p_credits WHERE p_credits <= v_pool
    ON CONFLICT ("organizationId", day) DO UPDATE SET reserved = d.reserved + EXCLUDED.reserved
        WHERE d.used + d.reserved + EXCLUDED.reserved <= v_pool;
    IF NOT FOUND THEN
        PERFORM "chat_claim_undo"(p_id, p_conversation, p_new_conversation);
        RETURN QUERY SELECT * FROM "chat_claim_answer"('quota_exceeded');
        RETURN;
    END IF;
    INSERT INTO "OrgMemberDailyUsage" AS d ("organizationId", "userId", day, reserved)
    SELECT p_org, p_user, p_day, p_credits WHERE v_cap IS NULL OR p_credits <= v_cap
    ON CONFLICT ("organizationId", "userId", day) DO UPDATE SET reserved = d.reserved + EXCLUDED.reserved
        WHERE v_cap IS NULL OR d.used + d.reserved + EXCLUDED.reserved <= v_cap;
    IF NOT FOUND THEN
        UPDATE "OrgDailyUsage" d SET reserved = d.reserved - p_credits
         WHERE d."organizationId" = p_org AND d.day = p_day;
        PERFORM "chat_claim_undo"(p_id, p_conversation, p_new_conversation);
        RETURN QUERY SELECT * FROM "chat_claim_answer"('member_quota_exceeded');
        RETURN;
    END IF;

    RETURN QUERY SELECT * FROM "chat_claim_answer"('claimed', p_id, p_fingerprint, p_conversation, p_model);
END;
$$;
