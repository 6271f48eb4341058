import { FEEDBACK } from '../feedback/dto/message-feedback.dto';
import { SHARE } from '../shares/dto/share.response';
import { TOOL_CALLS } from '../tools/dto/tool-call.dto';
import { RecordedToolCall } from '../tools/run/tool-events';
import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import {
  PreparedStatement,
  PrismaService,
} from '../infra/prisma/prisma.service';
import { ChatMessage } from '../models/providers/model-provider';

/**
 * The messages of a conversation's branch, newest first, from its tip ($4: the anchor given, else the
 * conversation's current message) up at most $3 messages, if the user owns it (one row with nulls when
 * the branch is empty).
 */
const BRANCH_MESSAGES: PreparedStatement = {
  // Unnamed: planned at each execution (PreparedStatement.name): a walk of Message by id must stay one.
  text: `WITH RECURSIVE owned AS (
           SELECT c.id, CASE WHEN $4::boolean THEN $5::uuid ELSE c."currentMessageId" END AS tip
             FROM "Conversation" c WHERE c.id = $1::uuid AND c."userId" = $2::uuid
         ), branch AS (
           SELECT m.id, m."parentId", m.role, m.content, m."chatRequestId", 1 AS depth
             FROM owned o JOIN "Message" m ON m.id = o.tip AND m."conversationId" = o.id
           UNION ALL
           SELECT m.id, m."parentId", m.role, m.content, m."chatRequestId", b.depth + 1
             FROM branch b JOIN "Message" m ON m.id = b."parentId"
            WHERE b.depth < $3::int
         )
         SELECT b.role::text AS role, b.content,
                CASE WHEN b.role = 'assistant' THEN (
                  SELECT jsonb_agg(jsonb_build_object('id', t.id, 'step', t.step, 'callIndex', t."callIndex",
                           'callId', t."callId", 'tool', t."toolId", 'arguments', t.arguments, 'status', t.status,
                           'content', t.content, 'textOffset', t."textOffset") ORDER BY t.step, t."callIndex")
                    FROM "ToolExecution" t WHERE t."chatRequestId" = b."chatRequestId") END AS "toolCalls"
           FROM owned LEFT JOIN branch b ON true ORDER BY b.depth`,
};

/** A stored message of a branch, newest first: an answer carries the tool calls its run made. */
export interface BranchMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  toolCalls?: RecordedToolCall[];
}

const SUMMARY = {
  id: true,
  title: true,
  skillId: true,
  skillVersionId: true,
  archivedAt: true,
  createdAt: true,
  updatedAt: true,
} as const;

export interface ConversationSummaryRow {
  id: string;
  title: string;
  skillId: string | null;
  skillVersionId: string | null;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A message a new turn starts from (regenerate, edit), with the run that wrote it. */
export interface TurnOrigin {
  id: string;
  role: ChatMessage['role'];
  parentId: string | null;
  /** The model of the run that stored the message, the Skill version it ran and that version's instruction. */
  modelId: string | null;
  skillId: string | null;
  skillVersionId: string | null;
  instruction: string | null;
  /** The files that run attached. */
  fileIds: string[];
}

/** The changes PATCH /v1/conversations/:id may make; `currentMessageId` selects the branch through it. */
export interface ConversationChanges {
  title?: string;
  archived?: boolean;
  currentMessageId?: string;
}

@Injectable()
export class ConversationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The owner's conversations, newest activity first, after the cursor; `limit` + 1 rows to know if more follow. */
  findPageOfOwner(
    userId: string,
    archived: boolean,
    limit: number,
    after?: Cursor,
  ): Promise<ConversationSummaryRow[]> {
    return this.prisma.conversation.findMany({
      where: {
        userId,
        archivedAt: archived ? { not: null } : null,
        ...olderThan('updatedAt', after),
      },
      orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: SUMMARY,
    });
  }

  /**
   * The owner's conversations whose title or message text match every word of `query` (full text,
   * 'simple' configuration, each word a prefix), best first: a title match weighs more than a message
   * match. `limit` + 1 rows from `offset`.
   */
  searchOfOwner(
    userId: string,
    query: string,
    archived: boolean,
    limit: number,
    offset: number,
  ): Promise<ConversationSummaryRow[]> {
    return this.prisma.$queryRaw<ConversationSummaryRow[]>`
      WITH q AS (
        SELECT to_tsquery('simple', string_agg(quote_literal(word) || ':*', ' & ')) AS q
          FROM unnest(tsvector_to_array(to_tsvector('simple', ${query}))) AS word
      ), mine AS (
        SELECT c.id FROM "Conversation" c
         WHERE c."userId" = ${userId}::uuid AND (c."archivedAt" IS NOT NULL) = ${archived}
      ), hits AS (
        SELECT c.id, ts_rank(to_tsvector('simple'::regconfig, c.title), q.q) * 2 AS rank
          FROM "Conversation" c JOIN mine USING (id), q
         WHERE to_tsvector('simple'::regconfig, c.title) @@ q.q
        UNION ALL
        SELECT m."conversationId", ts_rank(to_tsvector('simple'::regconfig, left(m.content, 100000)), q.q)
          FROM "Message" m JOIN mine ON mine.id = m."conversationId", q
         WHERE to_tsvector('simple'::regconfig, left(m.content, 100000)) @@ q.q
      ), ranked AS (
        SELECT id, max(rank) AS rank FROM hits GROUP BY id
      )
      SELECT c.id, c.title, c."skillId", c."skillVersionId", c."archivedAt", c."createdAt", c."updatedAt"
        FROM ranked r JOIN "Conversation" c ON c.id = r.id
       ORDER BY r.rank DESC, c."updatedAt" DESC, c.id DESC
       LIMIT ${limit + 1} OFFSET ${offset}`;
  }

  /** One conversation with all its messages (every branch) in the order they were stored, only if `userId` owns it. */
  findOwnedWithMessages(userId: string, id: string) {
    return this.prisma.conversation.findFirst({
      where: { id, userId },
      select: {
        ...SUMMARY,
        currentMessageId: true,
        share: { select: SHARE },
        messages: {
          orderBy: { seq: 'asc' },
          select: {
            id: true,
            parentId: true,
            role: true,
            content: true,
            createdAt: true,
            chatRequestId: true,
            copiedFrom: true,
            feedback: { select: FEEDBACK },
            chatRequest: {
              select: {
                files: {
                  orderBy: { position: 'asc' },
                  select: { fileId: true, name: true, kind: true },
                },
                modelId: true,
                answeredModelId: true,
                ledgerEntry: {
                  select: {
                    inputTokens: true,
                    cachedInputTokens: true,
                    outputTokens: true,
                    credits: true,
                    modelId: true,
                    requestedModelId: true,
                  },
                },
                toolExecutions: TOOL_CALLS,
              },
            },
          },
        },
      },
    });
  }

  /**
   * The latest `maxMessages` messages of a conversation's branch, newest first, in one statement: the
   * current branch, or the one ending at `anchor.parentId` (none when null). Null if `userId` does not own it.
   */
  async findOwnedBranchMessages(
    userId: string,
    id: string,
    maxMessages: number,
    anchor?: { parentId: string | null },
  ): Promise<{ messages: BranchMessage[] } | null> {
    const rows = await this.prisma.statement<{
      role: BranchMessage['role'] | null;
      content: string | null;
      toolCalls: RecordedToolCall[] | null;
    }>(BRANCH_MESSAGES, [
      id,
      userId,
      maxMessages,
      anchor !== undefined,
      anchor?.parentId ?? null,
    ]);
    if (rows.length === 0) return null;
    return {
      messages: rows.flatMap((row) =>
        row.role && row.content !== null
          ? [
              {
                role: row.role,
                content: row.content,
                ...(row.toolCalls ? { toolCalls: row.toolCalls } : {}),
              },
            ]
          : [],
      ),
    };
  }

  /** Whether `userId` owns the conversation. */
  async isOwned(userId: string, id: string): Promise<boolean> {
    return (
      (await this.prisma.conversation.count({ where: { id, userId } })) > 0
    );
  }

  /** A message of a conversation `userId` owns, with the run that stored it; null if there is none. */
  async findOwnedMessage(
    userId: string,
    conversationId: string,
    messageId: string,
  ): Promise<TurnOrigin | null> {
    const [row] = await this.prisma.$queryRaw<TurnOrigin[]>`
      SELECT m.id::text, m.role::text AS role, m."parentId"::text AS "parentId", r."modelId", r."skillId"::text AS "skillId",
             r."skillVersionId"::text AS "skillVersionId", v.instruction,
             ARRAY(SELECT f."fileId"::text FROM "ChatRequestFile" f WHERE f."chatRequestId" = r.id ORDER BY f.position) AS "fileIds"
        FROM "Message" m
        JOIN "Conversation" c ON c.id = m."conversationId" AND c."userId" = ${userId}::uuid
        LEFT JOIN "ChatRequest" r ON r.id = m."chatRequestId"
        LEFT JOIN "SkillVersion" v ON v.id = r."skillVersionId"
       WHERE m.id = ${messageId}::uuid AND m."conversationId" = ${conversationId}::uuid`;
    return row ?? null;
  }

  /** The latest user message of the conversation's current branch (null when it has none), with the run that stored it. */
  async findLastUserMessageOfBranch(
    userId: string,
    conversationId: string,
  ): Promise<TurnOrigin | null> {
    const [row] = await this.prisma.$queryRaw<TurnOrigin[]>`
      WITH RECURSIVE walk AS (
        SELECT m.id, m."parentId", m.role, m."chatRequestId"
          FROM "Conversation" c JOIN "Message" m ON m.id = c."currentMessageId"
         WHERE c.id = ${conversationId}::uuid AND c."userId" = ${userId}::uuid
        UNION ALL
        SELECT m.id, m."parentId", m.role, m."chatRequestId"
          FROM walk w JOIN "Message" m ON m.id = w."parentId"
         WHERE w.role <> 'user'
      )
      SELECT w.id::text, w.role::text AS role, w."parentId"::text AS "parentId", r."modelId", r."skillId"::text AS "skillId",
             r."skillVersionId"::text AS "skillVersionId", v.instruction,
             ARRAY(SELECT f."fileId"::text FROM "ChatRequestFile" f WHERE f."chatRequestId" = r.id ORDER BY f.position) AS "fileIds"
        FROM walk w
        LEFT JOIN "ChatRequest" r ON r.id = w."chatRequestId"
        LEFT JOIN "SkillVersion" v ON v.id = r."skillVersionId"
       WHERE w.role = 'user'
       LIMIT 1`;
    return row ?? null;
  }

  /**
   * Applies the changes in one statement if `userId` owns the conversation (and, with
   * `currentMessageId`, that message is one of its own): the current message becomes the newest leaf
   * below the one given. The last activity (`updatedAt`) does not change. Null when nothing matched.
   */
  async updateOwned(
    userId: string,
    id: string,
    changes: ConversationChanges,
  ): Promise<ConversationSummaryRow | null> {
    const [row] = await this.prisma.$queryRaw<ConversationSummaryRow[]>`
      WITH RECURSIVE target AS (
        SELECT c.id FROM "Conversation" c WHERE c.id = ${id}::uuid AND c."userId" = ${userId}::uuid
      ), down AS (
        SELECT m.id, 1 AS depth FROM "Message" m JOIN target t ON m."conversationId" = t.id WHERE m.id = ${changes.currentMessageId ?? null}::uuid
        UNION ALL
        SELECT (SELECT k.id FROM "Message" k WHERE k."parentId" = d.id ORDER BY k.seq DESC LIMIT 1), d.depth + 1
          FROM down d WHERE d.id IS NOT NULL
      ), leaf AS (
        SELECT id FROM down WHERE id IS NOT NULL ORDER BY depth DESC LIMIT 1
      )
      UPDATE "Conversation" c
         SET title = COALESCE(${changes.title ?? null}::text, c.title),
             "archivedAt" = CASE WHEN ${changes.archived ?? null}::boolean IS NULL THEN c."archivedAt"
                                 WHEN ${changes.archived ?? null}::boolean THEN COALESCE(c."archivedAt", now())
                                 ELSE NULL END,
             "currentMessageId" = COALESCE((SELECT id FROM leaf), c."currentMessageId")
        FROM target
       WHERE c.id = target.id AND (${changes.currentMessageId ?? null}::uuid IS NULL OR EXISTS (SELECT 1 FROM leaf))
      RETURNING c.id::text, c.title, c."skillId"::text AS "skillId",
                c."skillVersionId"::text AS "skillVersionId", c."archivedAt", c."createdAt", c."updatedAt"`;
    return row ?? null;
  }

  /**
   * Deletes a conversation `userId` owns, with its messages, in one transaction. Its requests stay (their
   * keys must never bill twice) without their text and attached files; its ledger entries stay, no longer
   * naming it; runs still streaming in it are marked to stop. Answers the ids of those runs, or null when
   * there is no such conversation of theirs.
   */
  deleteOwned(userId: string, id: string): Promise<string[] | null> {
    return this.prisma.$transaction(async (tx) => {
      const owned = await tx.$queryRaw<
        { id: string }[]
      >`SELECT id::text FROM "Conversation" WHERE id = ${id}::uuid AND "userId" = ${userId}::uuid FOR UPDATE`;
      if (owned.length === 0) return null;
      const runs = await tx.$queryRaw<{ id: string; live: boolean }[]>`
        UPDATE "ChatRequest" r
           SET "responseBody" = NULL,
               "stopRequestedAt" = CASE WHEN r.status = 'streaming' THEN COALESCE(r."stopRequestedAt", now()) ELSE r."stopRequestedAt" END
         WHERE r."conversationId" = ${id}::uuid
        RETURNING r.id::text, r.status = 'streaming' AS live`;
      await tx.chatRequestFile.deleteMany({
        where: { chatRequestId: { in: runs.map((run) => run.id) } },
      });
      await tx.conversation.delete({ where: { id }, select: { id: true } });
      return runs.filter((run) => run.live).map((run) => run.id);
    });
  }
}
