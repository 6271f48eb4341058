-- AlterEnum
ALTER TYPE "ChatRequestStatus" ADD VALUE 'stopped';

-- DropForeignKey
ALTER TABLE "ChatRequest" DROP CONSTRAINT "ChatRequest_conversationId_fkey";

-- AlterTable
ALTER TABLE "ChatRequest" ADD COLUMN     "stopRequestedAt" TIMESTAMPTZ(3),
ALTER COLUMN "conversationId" DROP NOT NULL;

-- AlterTable
ALTER TABLE "Conversation" ADD COLUMN     "archivedAt" TIMESTAMPTZ(3),
ADD COLUMN     "currentMessageId" UUID;

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "parentId" UUID;

-- CreateIndex
CREATE INDEX "Message_parentId_idx" ON "Message"("parentId");

-- AddForeignKey
ALTER TABLE "ChatRequest" ADD CONSTRAINT "ChatRequest_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "Conversation"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Messages form a tree: each one follows its parent, and the conversation points at the last message of
-- its current branch. Existing conversations become one branch, in the order their messages were stored.
UPDATE "Message" m
   SET "parentId" = p.previous
  FROM (SELECT id, lag(id) OVER (PARTITION BY "conversationId" ORDER BY seq) AS previous FROM "Message") p
 WHERE m.id = p.id AND p.previous IS NOT NULL;

UPDATE "Conversation" c
   SET "currentMessageId" = (SELECT m.id FROM "Message" m WHERE m."conversationId" = c.id ORDER BY m.seq DESC LIMIT 1);

-- Search (GET /v1/conversations?q=): full-text over titles and message text with the 'simple'
-- configuration (no stemming, any language). Only a message's first 100,000 characters are indexed: a
-- tsvector must stay under 1 MB, and an index that could not hold a message would refuse to store it.
CREATE INDEX "Conversation_title_search_idx" ON "Conversation" USING GIN (to_tsvector('simple'::regconfig, title));
CREATE INDEX "Message_content_search_idx" ON "Message" USING GIN (to_tsvector('simple'::regconfig, left(content, 100000)));

DROP FUNCTION "chat_settle_many"(uuid[], text[], text[], text[], timestamptz[], boolean[], uuid[], uuid[], text[], integer[], integer[], integer[], uuid[], integer[], uuid[], text[], text[]);

-- The settlement of runs, only of those still streaming (the others were failed by the sweeper): the outcome
-- on the request (completed, failed or stopped); for a billed run its messages, a ledger entry (unique per
-- request) and the skill that ran; and the reservation turned into usage (`credits`, at most what was
-- reserved). A run's messages follow one another from their anchor: p_parents[i] when p_anchored[i]
-- (regenerate, edit: null is the conversation's start), else the conversation's current message, read
-- after its row is locked, so two turns settling at once append one after the other. The last message
-- becomes the current one. A run whose conversation was deleted meanwhile keeps no text and no messages;
-- its ledger entry and usage are written all the same. Element i of the run arrays belongs to run i;
-- message j belongs to run p_message_runs[j], in order. Answers the indexes of the runs settled. Callers
-- sort the runs by user, as for claims.
CREATE FUNCTION "chat_settle_many"(
    p_ids uuid[],
    p_statuses text[],
    p_bodies text[],
    p_error_codes text[],
    p_finished_at timestamptz[],
    p_billed boolean[],
    p_skills uuid[],
    p_skill_versions uuid[],
    p_models text[],
    p_input_tokens integer[],
    p_output_tokens integer[],
    p_credits integer[],
    p_ledger_ids uuid[],
    p_anchored boolean[],
    p_parents uuid[],
    p_message_runs integer[],
    p_message_ids uuid[],
    p_message_roles text[],
    p_message_contents text[]
) RETURNS TABLE (n integer)
LANGUAGE plpgsql AS $$
DECLARE
    v_run record;
    v_parent uuid;
    v_last uuid;
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
        UPDATE "ChatRequest" r
           SET status = p_statuses[i]::"ChatRequestStatus",
               "responseBody" = CASE WHEN r."conversationId" IS NULL THEN NULL ELSE p_bodies[i] END,
               "errorCode" = p_error_codes[i], "finishedAt" = p_finished_at[i]
         WHERE r.id = p_ids[i] AND r.status = 'streaming'
        RETURNING r."userId", r."conversationId", r."usageDay", r."reservedCredits" INTO v_run;
        CONTINUE WHEN NOT FOUND;

        IF p_billed[i] AND v_run."conversationId" IS NOT NULL THEN
            SELECT c."currentMessageId" INTO v_parent FROM "Conversation" c WHERE c.id = v_run."conversationId" FOR UPDATE;
            IF FOUND THEN
                IF p_anchored[i] THEN
                    v_parent := p_parents[i];
                END IF;
                v_last := NULL;
                INSERT INTO "Message" (id, "conversationId", "chatRequestId", "parentId", role, content, "createdAt")
                SELECT m.id, v_run."conversationId", p_ids[i],
                       CASE WHEN m.k = min(m.k) OVER () THEN v_parent ELSE lag(m.id) OVER (ORDER BY m.k) END,
                       m.role::"MessageRole", m.content, p_finished_at[i]
                  FROM unnest(p_message_runs, p_message_ids, p_message_roles, p_message_contents) WITH ORDINALITY AS m(run, id, role, content, k)
                 WHERE m.run = i
                 ORDER BY m.k;
                SELECT m.id INTO v_last
                  FROM unnest(p_message_runs, p_message_ids) WITH ORDINALITY AS m(run, id, k)
                 WHERE m.run = i ORDER BY m.k DESC LIMIT 1;
                UPDATE "Conversation" c
                   SET "updatedAt" = p_finished_at[i],
                       "currentMessageId" = COALESCE(v_last, c."currentMessageId"),
                       "skillId" = COALESCE(p_skills[i], c."skillId"),
                       "skillVersionId" = COALESCE(p_skill_versions[i], c."skillVersionId")
                 WHERE c.id = v_run."conversationId";
            END IF;
        END IF;

        IF p_billed[i] THEN
            INSERT INTO "LedgerEntry" (id, "userId", kind, status, "chatRequestId", "modelId", "conversationId", "skillId",
                                       "skillVersionId", "inputTokens", "outputTokens", credits, "createdAt")
            VALUES (p_ledger_ids[i], v_run."userId", 'usage',
                    (CASE WHEN p_statuses[i] = 'completed' THEN 'completed' ELSE 'partial' END)::"LedgerStatus",
                    p_ids[i], p_models[i], v_run."conversationId", p_skills[i], p_skill_versions[i],
                    p_input_tokens[i], p_output_tokens[i], p_credits[i], p_finished_at[i]);
        END IF;

        UPDATE "DailyUsage" d
           SET reserved = d.reserved - v_run."reservedCredits", used = d.used + p_credits[i]
         WHERE d."userId" = v_run."userId" AND d.day = v_run."usageDay";
        n := i;
        RETURN NEXT;
    END LOOP;
END;
$$;

-- The claim's answer for a key already taken also carries the request's model and, once it was billed,
-- its ledger entry's figures, so that a retry is replayed (as text or as events) from that one answer.
DROP FUNCTION "chat_claim_many"(uuid[], uuid[], text[], text[], uuid[], boolean[], text[], text[], uuid[], uuid[], date[], integer[], integer[]);
DROP FUNCTION "chat_claim"(uuid, uuid, text, text, uuid, boolean, text, text, uuid, uuid, date, integer, timestamptz);

CREATE FUNCTION "chat_claim"(
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
        SELECT 'taken'::text, r.id, r.fingerprint, r.status::text, r."conversationId", r."responseBody", r."errorCode",
               r."modelId", l."inputTokens", l."outputTokens", l.credits
          FROM "ChatRequest" r LEFT JOIN "LedgerEntry" l ON l."chatRequestId" = r.id
         WHERE r."userId" = p_user AND r."idempotencyKey" = p_key;
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
            SELECT 'taken'::text, r.id, r.fingerprint, r.status::text, r."conversationId", r."responseBody", r."errorCode",
                   r."modelId", l."inputTokens", l."outputTokens", l.credits
              FROM "ChatRequest" r LEFT JOIN "LedgerEntry" l ON l."chatRequestId" = r.id
             WHERE r."userId" = p_user AND r."idempotencyKey" = p_key;
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
    "errorCode" text,
    "modelId" text,
    "inputTokens" integer,
    "outputTokens" integer,
    credits integer
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
            "modelId" := v_row."modelId";
            "inputTokens" := v_row."inputTokens";
            "outputTokens" := v_row."outputTokens";
            credits := v_row.credits;
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
