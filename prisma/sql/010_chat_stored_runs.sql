-- A chat request as a retry, a follower or a stop reads it: the request with, once it was billed, its
-- ledger entry's figures. The one place this read is written; chat_request_by_key reads it by key.
-- Columns added later go at the end (CREATE OR REPLACE VIEW may only append): the fallback that answered
-- (null: the model asked for), the cached input tokens and the model billed.
CREATE OR REPLACE VIEW "chat_stored_runs" AS
SELECT r.id, r."userId", r."idempotencyKey", r.fingerprint, r.status::text AS status, r."conversationId",
       r."responseBody", r."errorCode", r."modelId", l."inputTokens", l."outputTokens", l.credits,
       r."answeredModelId", l."cachedInputTokens", l."modelId" AS "billedModelId"
  FROM "ChatRequest" r LEFT JOIN "LedgerEntry" l ON l."chatRequestId" = r.id;

CREATE OR REPLACE FUNCTION "chat_request_by_key"(p_user uuid, p_key text) RETURNS SETOF "chat_stored_runs"
LANGUAGE sql STABLE AS $$
    SELECT * FROM "chat_stored_runs" v WHERE v."userId" = p_user AND v."idempotencyKey" = p_key;
$$;
