-- Chat at scale: the idempotency claim and the settlement of runs in one statement each, for many runs at
-- once, and change notifications for the caches. Neither is part of the Prisma schema (functions and
-- triggers): keep them here.

-- The claim of a chat or Skill run, atomically: answer the request already made under the idempotency key,
-- or check that the caller's plan (as stored now, whatever an instance has cached) includes the model,
-- create the conversation when it is new, insert the request under its key and reserve the credits if
-- they fit today's limit (plan credits + admin grants covering the day). Answers one row:
--   claimed            the run is ours; generate it.
--   taken              a request holds the key (made before, or committed while this one waited on it);
--                      nothing changed, and the row carries its outcome so the caller can replay or join it.
--   model_not_allowed  the plan does not include the (active) model; nothing changed.
--   quota_exceeded     the reservation does not fit; nothing changed (the key stays unused).
--   not_found          the conversation to continue is not the user's (any more); nothing changed.
-- Concurrent claims of one user queue on the DailyUsage row lock and each sees the previous one's
-- reservation, so together they never exceed the limit. The reservation is the last step, so that lock is
-- held only from it to the commit; a refused reservation deletes the rows this claim inserted.
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
    "errorCode" text
)
LANGUAGE plpgsql AS $$
DECLARE
    v_limit bigint;
BEGIN
    RETURN QUERY
        SELECT 'taken'::text, r.id, r.fingerprint, r.status::text, r."conversationId", r."responseBody", r."errorCode"
          FROM "ChatRequest" r WHERE r."userId" = p_user AND r."idempotencyKey" = p_key;
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
        RETURN QUERY SELECT 'model_not_allowed'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text;
        RETURN;
    END IF;

    IF p_new_conversation THEN
        INSERT INTO "Conversation" (id, "userId", title, "skillId", "skillVersionId", "createdAt", "updatedAt")
        VALUES (p_conversation, p_user, p_title, p_skill, p_skill_version, now(), now());
    ELSE
        PERFORM 1 FROM "Conversation" c WHERE c.id = p_conversation AND c."userId" = p_user FOR KEY SHARE;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text;
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
            SELECT 'taken'::text, r.id, r.fingerprint, r.status::text, r."conversationId", r."responseBody", r."errorCode"
              FROM "ChatRequest" r WHERE r."userId" = p_user AND r."idempotencyKey" = p_key;
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
        RETURN QUERY SELECT 'quota_exceeded'::text, NULL::uuid, NULL::text, NULL::text, NULL::uuid, NULL::text, NULL::text;
        RETURN;
    END IF;

    RETURN QUERY SELECT 'claimed'::text, p_id, p_fingerprint, 'streaming'::text, p_conversation, NULL::text, NULL::text;
END;
$$;

-- Several claims in one statement and one transaction (one commit for all), in the order given: callers
-- sort them by user so that concurrent batches take the users' quota rows in the same order. Element i of
-- every array belongs to claim i; answers one row per claim with its index (1-based).
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
    p_leases timestamptz[]
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
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
        RETURN QUERY
            SELECT i, c.* FROM "chat_claim"(p_ids[i], p_users[i], p_keys[i], p_fingerprints[i], p_conversations[i],
                                            p_new_conversations[i], p_titles[i], p_models[i], p_skills[i],
                                            p_skill_versions[i], p_days[i], p_credits[i], p_leases[i]) c;
    END LOOP;
END;
$$;

-- The settlement of runs, only of those still streaming (the others were failed by the sweeper): the outcome
-- on the request; for a billed run its messages (after the conversation row is locked, so two turns settling
-- at once append one after the other), a ledger entry (unique per request) and the skill that ran; and the
-- reservation turned into usage (`credits`, at most what was reserved). Element i of the run arrays belongs
-- to run i; message j belongs to run p_message_runs[j], in order. Answers the indexes of the runs settled.
-- Callers sort the runs by user, as for claims.
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
    p_message_runs integer[],
    p_message_ids uuid[],
    p_message_roles text[],
    p_message_contents text[]
) RETURNS TABLE (n integer)
LANGUAGE plpgsql AS $$
DECLARE
    v_run record;
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
        UPDATE "ChatRequest" r
           SET status = p_statuses[i]::"ChatRequestStatus", "responseBody" = p_bodies[i],
               "errorCode" = p_error_codes[i], "finishedAt" = p_finished_at[i]
         WHERE r.id = p_ids[i] AND r.status = 'streaming'
        RETURNING r."userId", r."conversationId", r."usageDay", r."reservedCredits" INTO v_run;
        CONTINUE WHEN NOT FOUND;

        IF p_billed[i] THEN
            UPDATE "Conversation" c
               SET "updatedAt" = p_finished_at[i],
                   "skillId" = COALESCE(p_skills[i], c."skillId"),
                   "skillVersionId" = COALESCE(p_skill_versions[i], c."skillVersionId")
             WHERE c.id = v_run."conversationId";
            INSERT INTO "Message" (id, "conversationId", "chatRequestId", role, content, "createdAt")
            SELECT m.id, v_run."conversationId", p_ids[i], m.role::"MessageRole", m.content, p_finished_at[i]
              FROM unnest(p_message_runs, p_message_ids, p_message_roles, p_message_contents) WITH ORDINALITY AS m(run, id, role, content, k)
             WHERE m.run = i
             ORDER BY m.k;
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

-- Change notifications: instances cache sessions (with their user) and the catalog, and drop what a
-- committed change makes stale when PostgreSQL delivers the notification (LISTEN "app_changes").
-- Payloads: 'user:<id>' (plan, role, email, disabled, or a session of that user deleted), 'catalog'
-- (plans, models, which plan has which model) and 'all' (too many rows at once, or a TRUNCATE).
-- Statement-level triggers: one notification per user per statement; identical payloads of one
-- transaction are delivered once.

CREATE FUNCTION "notify_users_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_ids uuid[];
BEGIN
    IF TG_OP = 'UPDATE' THEN
        SELECT array_agg(DISTINCT n.id) INTO v_ids
          FROM changed_new n JOIN changed_old o ON o.id = n.id
         WHERE (o."planCode", o.role, o.email, o."disabledAt") IS DISTINCT FROM (n."planCode", n.role, n.email, n."disabledAt");
    ELSE
        SELECT array_agg(DISTINCT o.id) INTO v_ids FROM changed_old o;
    END IF;
    PERFORM "notify_app_changes"(v_ids);
    RETURN NULL;
END;
$$;

CREATE FUNCTION "notify_sessions_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_ids uuid[];
BEGIN
    IF TG_OP = 'UPDATE' THEN
        SELECT array_agg(DISTINCT n."userId") INTO v_ids
          FROM changed_new n JOIN changed_old o ON o.id = n.id
         WHERE (o."userId", o."tokenHash", o."expiresAt") IS DISTINCT FROM (n."userId", n."tokenHash", n."expiresAt");
    ELSE
        SELECT array_agg(DISTINCT o."userId") INTO v_ids FROM changed_old o;
    END IF;
    PERFORM "notify_app_changes"(v_ids);
    RETURN NULL;
END;
$$;

-- One notification per user, or a single 'all' past 500 users (a notification queue is not a bulk channel).
CREATE FUNCTION "notify_app_changes"(p_user_ids uuid[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_id uuid;
BEGIN
    IF p_user_ids IS NULL THEN
        RETURN;
    END IF;
    IF cardinality(p_user_ids) > 500 THEN
        PERFORM pg_notify('app_changes', 'all');
        RETURN;
    END IF;
    FOREACH v_id IN ARRAY p_user_ids LOOP
        PERFORM pg_notify('app_changes', 'user:' || v_id::text);
    END LOOP;
END;
$$;

CREATE FUNCTION "notify_catalog_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('app_changes', 'catalog');
    RETURN NULL;
END;
$$;

CREATE FUNCTION "notify_all_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('app_changes', 'all');
    RETURN NULL;
END;
$$;

CREATE TRIGGER "User_changed_update" AFTER UPDATE ON "User"
REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
FOR EACH STATEMENT EXECUTE FUNCTION "notify_users_changed"();
CREATE TRIGGER "User_changed_delete" AFTER DELETE ON "User"
REFERENCING OLD TABLE AS changed_old
FOR EACH STATEMENT EXECUTE FUNCTION "notify_users_changed"();
CREATE TRIGGER "User_truncated" AFTER TRUNCATE ON "User"
FOR EACH STATEMENT EXECUTE FUNCTION "notify_all_changed"();

CREATE TRIGGER "Session_changed_update" AFTER UPDATE ON "Session"
REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
FOR EACH STATEMENT EXECUTE FUNCTION "notify_sessions_changed"();
CREATE TRIGGER "Session_changed_delete" AFTER DELETE ON "Session"
REFERENCING OLD TABLE AS changed_old
FOR EACH STATEMENT EXECUTE FUNCTION "notify_sessions_changed"();
CREATE TRIGGER "Session_truncated" AFTER TRUNCATE ON "Session"
FOR EACH STATEMENT EXECUTE FUNCTION "notify_all_changed"();

CREATE TRIGGER "Plan_changed" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "Plan"
FOR EACH STATEMENT EXECUTE FUNCTION "notify_catalog_changed"();
CREATE TRIGGER "Model_changed" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "Model"
FOR EACH STATEMENT EXECUTE FUNCTION "notify_catalog_changed"();
CREATE TRIGGER "PlanModel_changed" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "PlanModel"
FOR EACH STATEMENT EXECUTE FUNCTION "notify_catalog_changed"();
