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
BEGIN
    RETURN QUERY
        SELECT 'taken'::text, v.id, v.fingerprint, v.status, v."conversationId", v."responseBody", v."errorCode",
               v."modelId", v."inputTokens", v."outputTokens", v.credits
          FROM "chat_request_by_key"(p_user, p_key) v;
    IF FOUND THEN
        RETURN;
    END IF;

    -- The organization before its member row, as membership changes take them (no circular wait).
    PERFORM 1 FROM "Organization" o WHERE o.id = p_org FOR KEY SHARE;
    SELECT m."dailyCreditLimit", o."planCode", p."dailyCredits"::bigint * o.seats
      INTO v_cap, v_plan, v_pool
      FROM "OrgMember" m
      JOIN "Organization" o ON o.id = m."organizationId"
      JOIN "Plan" p ON p.code = o."planCode"
     WHERE m."organizationId" = p_org AND m."userId" = p_user
       FOR KEY SHARE OF m;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_member'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::int, NULL::int, NULL::int;
        RETURN;
    END IF;
    IF v_plan = 'free' OR v_pool <= 0 THEN
        RETURN QUERY SELECT 'org_plan_required'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::int, NULL::int, NULL::int;
        RETURN;
    END IF;
    PERFORM 1 FROM "PlanModel" pm JOIN "Model" md ON md.id = pm."modelId" AND md.active
     WHERE pm."planCode" = v_plan AND pm."modelId" = p_model;
    IF NOT FOUND THEN
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
                                    "skillId", "skillVersionId", "usageDay", "reservedCredits", "leaseExpiresAt",
                                    "organizationId")
    VALUES (p_id, p_user, p_key, p_fingerprint, 'streaming', p_conversation, p_model,
            p_skill, p_skill_version, p_day, p_credits, p_lease_until, p_org)
    ON CONFLICT ("userId", "idempotencyKey") DO NOTHING;
    IF NOT FOUND THEN
        IF p_new_conversation THEN
            DELETE FROM "Conversation" WHERE "Conversation".id = p_conversation;
        END IF;
        RETURN QUERY
            SELECT 'taken'::text, v.id, v.fingerprint, v.status, v."conversationId", v."responseBody", v."errorCode",
                   v."modelId", v."inputTokens", v."outputTokens", v.credits
              FROM "chat_request_by_key"(p_user, p_key) v;
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
        DELETE FROM "ChatRequest" WHERE "ChatRequest".id = p_id;
        IF p_new_conversation THEN
            DELETE FROM "Conversation" WHERE "Conversation".id = p_conversation;
        END IF;
        RETURN QUERY SELECT 'quota_exceeded'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::int, NULL::int, NULL::int;
        RETURN;
    END IF;
    INSERT INTO "OrgMemberDailyUsage" AS d ("organizationId", "userId", day, reserved)
    SELECT p_org, p_user, p_day, p_credits WHERE v_cap IS NULL OR p_credits <= v_cap
    ON CONFLICT ("organizationId", "userId", day) DO UPDATE SET reserved = d.reserved + EXCLUDED.reserved
        WHERE v_cap IS NULL OR d.used + d.reserved + EXCLUDED.reserved <= v_cap;
    IF NOT FOUND THEN
        UPDATE "OrgDailyUsage" d SET reserved = d.reserved - p_credits
         WHERE d."organizationId" = p_org AND d.day = p_day;
        DELETE FROM "ChatRequest" WHERE "ChatRequest".id = p_id;
        IF p_new_conversation THEN
            DELETE FROM "Conversation" WHERE "Conversation".id = p_conversation;
        END IF;
        RETURN QUERY SELECT 'member_quota_exceeded'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::int, NULL::int, NULL::int;
        RETURN;
    END IF;

    RETURN QUERY SELECT 'claimed'::text, p_id, p_fingerprint, 'streaming'::text, p_conversation, NULL::text, NULL::text, p_model, NULL::int, NULL::int, NULL::int;
END;
$$;
