-- The settlement of runs in one statement and one transaction, in the order given, only of those still
-- streaming (the others were failed by the sweeper): the outcome on the request (completed, failed or
-- stopped); for a billed run its messages, a ledger entry (unique per request) and the skill that ran; and
-- the reservation turned into usage (`credits`, at most what was reserved), on the user's day or, for a run
-- an organization pays, on its pool's day and its member's. A run's messages follow one
-- another from their anchor: `parentId` when `anchored` (regenerate, edit: null is the conversation's
-- start), else the conversation's current message, read after its row is locked, so two turns settling at
-- once append one after the other. The last message becomes the current one. A run whose conversation was
-- deleted meanwhile keeps no text and no messages; its ledger entry and usage are written all the same.
-- `p_runs` is a JSON array of objects with the fields named below, each with its `messages` ({id, role,
-- content}, in order), and for a run that used tools its `steps` and `toolCalls` for the ledger entry
-- (absent in the previous release's calls: null); `modelId` is the model billed, `requestedModelId` the
-- one asked for when a fallback answered (docs/adr/0063), `cachedInputTokens` the input read from the
-- provider's cache (both absent in older releases' calls). Answers the positions (from 1) of the runs settled. Callers sort the runs by payer (users, then organizations) and user.
CREATE OR REPLACE FUNCTION "chat_settle_many"(p_runs jsonb) RETURNS TABLE (n integer)
-- enable_seqscan off: see chat_claim_many (docs/adr/0066).
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    v_input record;
    v_run record;
    v_parent uuid;
    v_last uuid;
BEGIN
    FOR v_input IN
        SELECT s.*
          FROM ROWS FROM (jsonb_to_recordset(p_runs) AS (
                   id uuid, status text, "responseBody" text, "errorCode" text, "finishedAt" timestamptz,
                   billed boolean, "skillId" uuid, "skillVersionId" uuid, "modelId" text, "inputTokens" integer,
                   "outputTokens" integer, credits integer, "ledgerId" uuid, anchored boolean, "parentId" uuid,
                   messages jsonb, steps jsonb, "toolCalls" jsonb, "cachedInputTokens" integer,
                   "requestedModelId" text))
               WITH ORDINALITY AS s(id, status, "responseBody", "errorCode", "finishedAt", billed, "skillId",
                                    "skillVersionId", "modelId", "inputTokens", "outputTokens", credits,
                                    "ledgerId", anchored, "parentId", messages, steps, "toolCalls",
                                    "cachedInputTokens", "requestedModelId", k)
         ORDER BY s.k
    LOOP
        UPDATE "ChatRequest" r
           SET status = v_input.status::"ChatRequestStatus",
               "responseBody" = CASE WHEN r."conversationId" IS NULL THEN NULL ELSE v_input."responseBody" END,
               "errorCode" = v_input."errorCode", "finishedAt" = v_input."finishedAt",
               "answeredModelId" = CASE WHEN v_input."requestedModelId" IS NULL THEN NULL
                                        ELSE v_input."modelId" END
         WHERE r.id = v_input.id AND r.status = 'streaming'
        RETURNING r."userId", r."conversationId", r."usageDay", r."reservedCredits", r."organizationId" INTO v_run;
        CONTINUE WHEN NOT FOUND;

        IF v_input.billed AND v_run."conversationId" IS NOT NULL THEN
            SELECT c."currentMessageId" INTO v_parent FROM "Conversation" c WHERE c.id = v_run."conversationId" FOR UPDATE;
            IF FOUND THEN
                IF v_input.anchored THEN
                    v_parent := v_input."parentId";
                END IF;
                v_last := NULL;
                INSERT INTO "Message" (id, "conversationId", "chatRequestId", "parentId", role, content, "createdAt")
                SELECT m.id, v_run."conversationId", v_input.id,
                       CASE WHEN m.k = min(m.k) OVER () THEN v_parent ELSE lag(m.id) OVER (ORDER BY m.k) END,
                       m.role::"MessageRole", m.content, v_input."finishedAt"
                  FROM ROWS FROM (jsonb_to_recordset(v_input.messages) AS (id uuid, role text, content text))
                       WITH ORDINALITY AS m(id, role, content, k)
                 ORDER BY m.k;
                SELECT m.id INTO v_last
                  FROM ROWS FROM (jsonb_to_recordset(v_input.messages) AS (id uuid))
                       WITH ORDINALITY AS m(id, k)
                 ORDER BY m.k DESC LIMIT 1;
                UPDATE "Conversation" c
                   SET "updatedAt" = v_input."finishedAt",
                       "currentMessageId" = COALESCE(v_last, c."currentMessageId"),
                       "skillId" = COALESCE(v_input."skillId", c."skillId"),
                       "skillVersionId" = COALESCE(v_input."skillVersionId", c."skillVersionId")
                 WHERE c.id = v_run."conversationId";
            END IF;
        END IF;

        IF v_input.billed THEN
            INSERT INTO "LedgerEntry" (id, "userId", kind, status, "chatRequestId", "modelId", "conversationId", "skillId",
                                       "skillVersionId", "inputTokens", "outputTokens", credits, steps, "toolCalls",
                                       "createdAt", "organizationId", "cachedInputTokens", "requestedModelId")
            VALUES (v_input."ledgerId", v_run."userId", 'usage',
                    (CASE WHEN v_input.status = 'completed' THEN 'completed' ELSE 'partial' END)::"LedgerStatus",
                    v_input.id, v_input."modelId", v_run."conversationId", v_input."skillId", v_input."skillVersionId",
                    v_input."inputTokens", v_input."outputTokens", v_input.credits, v_input.steps, v_input."toolCalls",
                    v_input."finishedAt", v_run."organizationId", COALESCE(v_input."cachedInputTokens", 0),
                    v_input."requestedModelId");
        END IF;

        IF v_run."organizationId" IS NULL THEN
            UPDATE "DailyUsage" d
               SET reserved = d.reserved - v_run."reservedCredits", used = d.used + v_input.credits
             WHERE d."userId" = v_run."userId" AND d.day = v_run."usageDay";
        ELSE
            -- The pool's day, then the member's (the order every claim takes them in).
            UPDATE "OrgDailyUsage" d
               SET reserved = d.reserved - v_run."reservedCredits", used = d.used + v_input.credits
             WHERE d."organizationId" = v_run."organizationId" AND d.day = v_run."usageDay";
            UPDATE "OrgMemberDailyUsage" d
               SET reserved = d.reserved - v_run."reservedCredits", used = d.used + v_input.credits
             WHERE d."organizationId" = v_run."organizationId" AND d."userId" = v_run."userId"
               AND d.day = v_run."usageDay";
        END IF;
        n := v_input.k;
        RETURN NEXT;
    END LOOP;
END;
$$;
