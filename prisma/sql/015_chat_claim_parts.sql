-- The parts chat_claim and chat_claim_org share (docs/adr/0027-idempotent-chat-claim-and-reserve.md,
-- docs/adr/0062-organizations.md): each answers in the claim's row shape, or does one step of it.

-- The claim's answer when the key already holds a request: that request (no row when it holds none).
CREATE OR REPLACE FUNCTION "chat_claim_taken"(p_user uuid, p_key text) RETURNS TABLE (
    outcome text, id uuid, fingerprint text, status text, "conversationId" uuid, "responseBody" text,
    "errorCode" text, "modelId" text, "inputTokens" integer, "outputTokens" integer, credits integer
)
LANGUAGE sql STABLE AS $$
    SELECT 'taken'::text, v.id, v.fingerprint, v.status, v."conversationId", v."responseBody", v."errorCode",
           v."modelId", v."inputTokens", v."outputTokens", v.credits
      FROM "chat_request_by_key"(p_user, p_key) v;
$$;

-- The claim's answer for a refusal or a success: the outcome, and for a success the new request's id,
-- fingerprint, conversation and model.
CREATE OR REPLACE FUNCTION "chat_claim_answer"(
    p_outcome text, p_id uuid DEFAULT NULL, p_fingerprint text DEFAULT NULL, p_conversation uuid DEFAULT NULL,
    p_model text DEFAULT NULL
) RETURNS TABLE (
    outcome text, id uuid, fingerprint text, status text, "conversationId" uuid, "responseBody" text,
    "errorCode" text, "modelId" text, "inputTokens" integer, "outputTokens" integer, credits integer
)
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_outcome, p_id, p_fingerprint, CASE WHEN p_outcome = 'claimed' THEN 'streaming' END, p_conversation,
           NULL::text, NULL::text, p_model, NULL::int, NULL::int, NULL::int;
$$;

-- The conversation (created, or checked to be the user's and kept, FOR KEY SHARE) and the request row
-- under the key, streaming and holding `p_credits`. Answers 'claimed', 'not_found' (no such conversation
-- of the user's) or 'taken' (another request claimed the key first: it committed while this one waited on
-- it; nothing of this claim remains).
CREATE OR REPLACE FUNCTION "chat_claim_request"(
    p_id uuid, p_user uuid, p_org uuid, p_key text, p_fingerprint text, p_conversation uuid,
    p_new_conversation boolean, p_title text, p_model text, p_skill uuid, p_skill_version uuid, p_day date,
    p_credits integer, p_lease_until timestamptz
) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    IF p_new_conversation THEN
        INSERT INTO "Conversation" (id, "userId", title, "skillId", "skillVersionId", "createdAt", "updatedAt")
        VALUES (p_conversation, p_user, p_title, p_skill, p_skill_version, now(), now());
    ELSE
        PERFORM 1 FROM "Conversation" c WHERE c.id = p_conversation AND c."userId" = p_user FOR KEY SHARE;
        IF NOT FOUND THEN
            RETURN 'not_found';
        END IF;
    END IF;

    INSERT INTO "ChatRequest" AS r (id, "userId", "idempotencyKey", fingerprint, status, "conversationId", "modelId",
                                    "skillId", "skillVersionId", "usageDay", "reservedCredits", "leaseExpiresAt",
                                    "organizationId")
    VALUES (p_id, p_user, p_key, p_fingerprint, 'streaming', p_conversation, p_model,
            p_skill, p_skill_version, p_day, p_credits, p_lease_until, p_org)
    ON CONFLICT ("userId", "idempotencyKey") DO NOTHING;
    IF NOT FOUND THEN
        PERFORM "chat_claim_undo"(NULL, p_conversation, p_new_conversation);
        RETURN 'taken';
    END IF;
    RETURN 'claimed';
END;
$$;

-- Takes back what chat_claim_request wrote, when a reservation refuses the claim: the key stays unused.
CREATE OR REPLACE FUNCTION "chat_claim_undo"(p_id uuid, p_conversation uuid, p_new_conversation boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_id IS NOT NULL THEN
        DELETE FROM "ChatRequest" WHERE "ChatRequest".id = p_id;
    END IF;
    IF p_new_conversation THEN
        DELETE FROM "Conversation" WHERE "Conversation".id = p_conversation;
    END IF;
END;
$$;
