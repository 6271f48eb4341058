-- An index under every foreign key whose ON DELETE action PostgreSQL runs when the parent row goes
-- (docs/adr/0066-indexes-under-foreign-keys.md). Without them each such delete scanned the whole child
-- table: a claim the quota refused (its request and new conversation are taken back) scanned Message,
-- ChatRequest and LedgerEntry; deleting a conversation scanned ChatRequest and LedgerEntry; deleting a
-- Skill scanned Conversation once per version; erasing an account scanned LedgerEntry, AuditLog,
-- CreditGrant, ToolExecution, ToolApproval and OrgMemberDailyUsage. test/chat-query-plans.e2e-spec.ts
-- keeps it so.
--
-- IF NOT EXISTS: on a large database an operator may build these beforehand without blocking writes
-- (CREATE INDEX CONCURRENTLY, same names); this migration then finds them (a migration runs in a
-- transaction, so it cannot build them concurrently itself: docs/adr/0010). A concurrent build that failed
-- leaves an invalid index under the name; it is dropped here and built again.
DO $$
DECLARE
    v_name text;
BEGIN
    FOR v_name IN
        SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE NOT i.indisvalid AND c.relnamespace = current_schema()::regnamespace
           AND c.relname IN ('Message_chatRequestId_idx', 'ChatRequest_conversationId_idx',
                             'LedgerEntry_conversationId_idx', 'ToolExecution_userId_idx', 'ToolApproval_userId_idx',
                             'OrgMemberDailyUsage_userId_idx', 'CreditGrant_adminId_idx', 'AuditLog_adminId_idx',
                             'Conversation_skillId_partial', 'Conversation_skillVersionId_partial',
                             'LedgerEntry_adminId_partial', 'LedgerEntry_organizationId_createdAt_partial')
    LOOP
        EXECUTE format('DROP INDEX %I', v_name);
    END LOOP;
END;
$$;

CREATE INDEX IF NOT EXISTS "Message_chatRequestId_idx" ON "Message"("chatRequestId");
CREATE INDEX IF NOT EXISTS "ChatRequest_conversationId_idx" ON "ChatRequest"("conversationId");
CREATE INDEX IF NOT EXISTS "LedgerEntry_conversationId_idx" ON "LedgerEntry"("conversationId");
CREATE INDEX IF NOT EXISTS "ToolExecution_userId_idx" ON "ToolExecution"("userId");
CREATE INDEX IF NOT EXISTS "ToolApproval_userId_idx" ON "ToolApproval"("userId");
CREATE INDEX IF NOT EXISTS "OrgMemberDailyUsage_userId_idx" ON "OrgMemberDailyUsage"("userId");
CREATE INDEX IF NOT EXISTS "CreditGrant_adminId_idx" ON "CreditGrant"("adminId");
CREATE INDEX IF NOT EXISTS "AuditLog_adminId_idx" ON "AuditLog"("adminId");

-- Partial, so the rows that hold no value (most conversations run no Skill; only an admin's grants have an
-- admin) add nothing to them: a chat writes no entry here. The schema cannot name a partial index;
-- prisma/schema.prisma says where they are.
CREATE INDEX IF NOT EXISTS "Conversation_skillId_partial" ON "Conversation"("skillId") WHERE "skillId" IS NOT NULL;
CREATE INDEX IF NOT EXISTS "Conversation_skillVersionId_partial" ON "Conversation"("skillVersionId") WHERE "skillVersionId" IS NOT NULL;
CREATE INDEX IF NOT EXISTS "LedgerEntry_adminId_partial" ON "LedgerEntry"("adminId") WHERE "adminId" IS NOT NULL;

-- An organization's ledger is read by organization and time; personal chats (most) have no organization,
-- so the index keeps only the rows that have one and a personal chat's ledger entry adds nothing to it.
-- Built before the full index goes: DROP INDEX locks the table against reads until the commit.
CREATE INDEX IF NOT EXISTS "LedgerEntry_organizationId_createdAt_partial" ON "LedgerEntry"("organizationId", "createdAt") WHERE "organizationId" IS NOT NULL;
DROP INDEX IF EXISTS "LedgerEntry_organizationId_createdAt_idx";
