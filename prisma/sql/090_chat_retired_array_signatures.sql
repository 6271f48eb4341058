-- The array signatures chat_claim_many and chat_settle_many had until issue 28 (one array per column),
-- kept only for instances of the previous release during a rolling update: they turn their arrays into
-- the JSON the current functions take. Drop them (with this file) in a migration of the next release.
CREATE OR REPLACE FUNCTION "chat_claim_many"(
    p_ids uuid[], p_users uuid[], p_keys text[], p_fingerprints text[], p_conversations uuid[],
    p_new_conversations boolean[], p_titles text[], p_models text[], p_skills uuid[], p_skill_versions uuid[],
    p_days date[], p_credits integer[], p_lease_ms integer[]
) RETURNS TABLE (
    n integer, outcome text, id uuid, fingerprint text, status text, "conversationId" uuid, "responseBody" text,
    "errorCode" text, "modelId" text, "inputTokens" integer, "outputTokens" integer, credits integer
)
LANGUAGE sql AS $$
    SELECT * FROM "chat_claim_many"((
        SELECT coalesce(jsonb_agg(jsonb_build_object(
                   'id', a.id, 'userId', a.user_id, 'idempotencyKey', a.key, 'fingerprint', a.fingerprint,
                   'conversationId', a.conversation, 'newConversation', a.new_conversation, 'title', a.title,
                   'modelId', a.model, 'skillId', a.skill, 'skillVersionId', a.skill_version, 'usageDay', a.day,
                   'reservedCredits', a.credits, 'leaseMs', a.lease_ms) ORDER BY a.k), '[]'::jsonb)
          FROM unnest(p_ids, p_users, p_keys, p_fingerprints, p_conversations, p_new_conversations, p_titles,
                      p_models, p_skills, p_skill_versions, p_days, p_credits, p_lease_ms)
               WITH ORDINALITY AS a(id, user_id, key, fingerprint, conversation, new_conversation, title, model,
                                    skill, skill_version, day, credits, lease_ms, k)));
$$;

CREATE OR REPLACE FUNCTION "chat_settle_many"(
    p_ids uuid[], p_statuses text[], p_bodies text[], p_error_codes text[], p_finished_at timestamptz[],
    p_billed boolean[], p_skills uuid[], p_skill_versions uuid[], p_models text[], p_input_tokens integer[],
    p_output_tokens integer[], p_credits integer[], p_ledger_ids uuid[], p_anchored boolean[], p_parents uuid[],
    p_message_runs integer[], p_message_ids uuid[], p_message_roles text[], p_message_contents text[]
) RETURNS TABLE (n integer)
LANGUAGE sql AS $$
    SELECT * FROM "chat_settle_many"((
        SELECT coalesce(jsonb_agg(jsonb_build_object(
                   'id', r.id, 'status', r.status, 'responseBody', r.body, 'errorCode', r.error_code,
                   'finishedAt', r.finished_at, 'billed', r.billed, 'skillId', r.skill,
                   'skillVersionId', r.skill_version, 'modelId', r.model, 'inputTokens', r.input_tokens,
                   'outputTokens', r.output_tokens, 'credits', r.credits, 'ledgerId', r.ledger_id,
                   'anchored', r.anchored, 'parentId', r.parent,
                   'messages', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', m.id, 'role', m.role,
                                                                             'content', m.content) ORDER BY m.k),
                                                '[]'::jsonb)
                                  FROM unnest(p_message_runs, p_message_ids, p_message_roles, p_message_contents)
                                       WITH ORDINALITY AS m(run, id, role, content, k)
                                 WHERE m.run = r.k)) ORDER BY r.k), '[]'::jsonb)
          FROM unnest(p_ids, p_statuses, p_bodies, p_error_codes, p_finished_at, p_billed, p_skills,
                      p_skill_versions, p_models, p_input_tokens, p_output_tokens, p_credits, p_ledger_ids,
                      p_anchored, p_parents)
               WITH ORDINALITY AS r(id, status, body, error_code, finished_at, billed, skill, skill_version, model,
                                    input_tokens, output_tokens, credits, ledger_id, anchored, parent, k)));
$$;
