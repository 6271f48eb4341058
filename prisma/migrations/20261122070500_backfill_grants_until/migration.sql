-- Subscriptions written before "grantsUntil" existed: give them the end the service computes (with the default
-- 3-day grace; the sweeper stores the configured grace's end when it sees a row that still grants).
UPDATE "Subscription" SET "grantsUntil" = CASE
    WHEN status = 'active' AND "currentPeriodEnd" IS NULL THEN NULL
    WHEN status = 'active' AND "cancelAtPeriodEnd" THEN "currentPeriodEnd"
    WHEN status = 'active' THEN "currentPeriodEnd" + interval '3 days'
    WHEN status = 'past_due' THEN COALESCE("pastDueSince", "currentPeriodEnd") + interval '3 days'
    ELSE to_timestamp(0)
  END
WHERE "grantsUntil" IS NULL;
