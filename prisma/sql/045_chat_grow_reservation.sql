-- A run that goes on after its model asked for tools reserves the next step before it asks again
-- (docs/adr/0061-tools.md): `p_credits` more on the run and on its user's day (or its organization's pool
-- and member day, docs/adr/0062-organizations.md), in one conditional
-- statement, only while the run is still streaming and the day's limit (the plan's daily credits plus the
-- grants of that day) still holds it. Answers whether it did; false leaves everything as it was. The run's
-- row is locked first, as the sweeper and the settlement take it, so they wait for this and see its
-- reservation.
CREATE OR REPLACE FUNCTION "chat_grow_reservation"(p_run uuid, p_credits integer) RETURNS boolean
-- enable_seqscan off: see chat_claim_many (docs/adr/0066).
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    v_run record;
    v_limit bigint;
    v_cap integer;
BEGIN
    SELECT r."userId", r."usageDay", r."organizationId" INTO v_run
      FROM "ChatRequest" r WHERE r.id = p_run AND r.status = 'streaming' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF v_run."organizationId" IS NOT NULL THEN
        -- The organization's pool, then its member's cap; the member must still be one.
        SELECT p."dailyCredits"::bigint * o.seats, m."dailyCreditLimit" INTO v_limit, v_cap
          FROM "OrgMember" m JOIN "Organization" o ON o.id = m."organizationId" JOIN "Plan" p ON p.code = o."planCode"
         WHERE m."organizationId" = v_run."organizationId" AND m."userId" = v_run."userId";
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        UPDATE "OrgDailyUsage" d SET reserved = d.reserved + p_credits
         WHERE d."organizationId" = v_run."organizationId" AND d.day = v_run."usageDay"
           AND d.used + d.reserved + p_credits <= v_limit;
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        UPDATE "OrgMemberDailyUsage" d SET reserved = d.reserved + p_credits
         WHERE d."organizationId" = v_run."organizationId" AND d."userId" = v_run."userId" AND d.day = v_run."usageDay"
           AND (v_cap IS NULL OR d.used + d.reserved + p_credits <= v_cap);
        IF NOT FOUND THEN
            UPDATE "OrgDailyUsage" d SET reserved = d.reserved - p_credits
             WHERE d."organizationId" = v_run."organizationId" AND d.day = v_run."usageDay";
            RETURN false;
        END IF;
        UPDATE "ChatRequest" r SET "reservedCredits" = r."reservedCredits" + p_credits WHERE r.id = p_run;
        RETURN true;
    END IF;
    SELECT p."dailyCredits" + COALESCE((
               SELECT SUM(g.credits) FROM "CreditGrant" g
               WHERE g."userId" = v_run."userId" AND g."firstDay" <= v_run."usageDay" AND g."lastDay" >= v_run."usageDay"), 0)
      INTO v_limit
      FROM "User" u JOIN "Plan" p ON p.code = u."planCode"
     WHERE u.id = v_run."userId";
    UPDATE "DailyUsage" d SET reserved = d.reserved + p_credits
     WHERE d."userId" = v_run."userId" AND d.day = v_run."usageDay" AND d.used + d.reserved + p_credits <= v_limit;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE "ChatRequest" r SET "reservedCredits" = r."reservedCredits" + p_credits WHERE r.id = p_run;
    RETURN true;
END;
$$;
