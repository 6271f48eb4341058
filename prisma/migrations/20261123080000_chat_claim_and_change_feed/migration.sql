-- Chat at scale: the idempotency claim in one statement, and change notifications for the caches.
-- Neither is part of the Prisma schema (functions and triggers): keep them here.

-- The claim of a chat or Skill run, atomically and in one round trip: check that the caller's plan (as
-- stored now, whatever an instance has cached) includes the model, reserve the credits if they fit today's
-- limit (plan credits + admin grants covering the day), create the conversation when it is new, and insert
-- the request under its idempotency key. Answers one row:
--   claimed            the run is ours; generate it.
--   model_not_allowed  the plan does not include the (active) model; nothing changed.
--   quota_exceeded     the reservation does not fit; nothing changed (the key stays unused).
--   taken              another request holds the key (it committed while this one waited on it); nothing
--                      changed, and the row carries that request's outcome so the caller can replay or join it.
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
