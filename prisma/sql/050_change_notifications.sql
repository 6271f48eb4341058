-- Change notifications: instances cache sessions (with their user) and the catalog, and drop what a
-- committed change makes stale when PostgreSQL delivers the notification (LISTEN "app_changes").
-- Payloads: 'user:<id>' (plan, role, email, disabled, verified, two-factor or deleted, or a session of that
-- user changed), 'catalog' (plans, models, which plan has which model) and 'all' (too many rows at once, or
-- a TRUNCATE). The statement-level triggers that call these are created by the migrations.

-- One notification per user, or a single 'all' past 500 users (a notification queue is not a bulk channel).
CREATE OR REPLACE FUNCTION "notify_app_changes"(p_user_ids uuid[]) RETURNS void
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

CREATE OR REPLACE FUNCTION "notify_users_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_ids uuid[];
BEGIN
    IF TG_OP = 'UPDATE' THEN
        SELECT array_agg(DISTINCT n.id) INTO v_ids
          FROM changed_new n JOIN changed_old o ON o.id = n.id
         WHERE (o."planCode", o.role, o.email, o."disabledAt", o."emailVerifiedAt", o."totpEnabledAt", o."deletedAt")
               IS DISTINCT FROM (n."planCode", n.role, n.email, n."disabledAt", n."emailVerifiedAt", n."totpEnabledAt", n."deletedAt");
    ELSE
        SELECT array_agg(DISTINCT o.id) INTO v_ids FROM changed_old o;
    END IF;
    PERFORM "notify_app_changes"(v_ids);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION "notify_sessions_changed"() RETURNS trigger
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

CREATE OR REPLACE FUNCTION "notify_catalog_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('app_changes', 'catalog');
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION "notify_all_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('app_changes', 'all');
    RETURN NULL;
END;
$$;
