import { Injectable } from '@nestjs/common';
import { uuidv7 } from '../common/ids';
import { PrismaService } from '../infra/prisma/prisma.service';
import { ChatMessage } from '../models/providers/model-provider';

export interface NewChatRequest {
  id: string;
  userId: string;
  idempotencyKey: string;
  fingerprint: string;
  conversationId: string;
  /** Created with the claim (title from the first message); otherwise it must already exist. */
  newConversationTitle?: string;
  modelId: string;
  skillId?: string;
  skillVersionId?: string;
  usageDay: Date;
  reservedCredits: number;
  leaseExpiresAt: Date;
}

/** A request under its idempotency key, as a retry needs it: to replay it, join it, or refuse the key. */
export interface StoredRequest {
  id: string;
  fingerprint: string;
  status: string;
  conversationId: string;
  responseBody: string | null;
  errorCode: string | null;
}

export type ClaimResult = { outcome: 'claimed' } | { outcome: 'model_not_allowed' } | { outcome: 'quota_exceeded' } | { outcome: 'taken'; request: StoredRequest };

/** How a run ended and what it costs; `billed` runs store their messages and a ledger entry. */
export interface Settlement {
  id: string;
  status: 'completed' | 'failed';
  responseBody: string;
  errorCode: string | null;
  finishedAt: Date;
  billed: boolean;
  /** The turn's messages and the answer, appended to the conversation in this order. */
  messages: ChatMessage[];
  modelId: string;
  skill?: { skillId: string; skillVersionId: string };
  inputTokens: number;
  outputTokens: number;
  credits: number;
}

const OUTCOME = { id: true, fingerprint: true, status: true, conversationId: true, responseBody: true, errorCode: true } as const;

interface ClaimRow {
  outcome: 'claimed' | 'model_not_allowed' | 'quota_exceeded' | 'taken';
  id: string | null;
  fingerprint: string | null;
  status: string | null;
  conversationId: string | null;
  responseBody: string | null;
  errorCode: string | null;
}

@Injectable()
export class ChatRequestsRepository {
  constructor(private readonly prisma: PrismaService) {}

  findByKey(userId: string, idempotencyKey: string): Promise<StoredRequest | null> {
    return this.prisma.chatRequest.findUnique({ where: { userId_idempotencyKey: { userId, idempotencyKey } }, select: OUTCOME });
  }

  findOutcome(id: string): Promise<StoredRequest | null> {
    return this.prisma.chatRequest.findUnique({ where: { id }, select: OUTCOME });
  }

  /**
   * The idempotency claim, the plan's access to the model, the quota reservation and a new conversation,
   * in one statement (the `chat_claim` function of the migrations): all of it happens, or none of it.
   */
  async claim(request: NewChatRequest): Promise<ClaimResult> {
    const isoDay = request.usageDay.toISOString().slice(0, 10);
    const [row] = await this.prisma.$queryRaw<ClaimRow[]>`
      SELECT outcome, id::text, fingerprint, status, "conversationId"::text AS "conversationId", "responseBody", "errorCode"
      FROM chat_claim(${request.id}::uuid, ${request.userId}::uuid, ${request.idempotencyKey}, ${request.fingerprint},
                      ${request.conversationId}::uuid, ${request.newConversationTitle !== undefined}, ${request.newConversationTitle ?? ''},
                      ${request.modelId}, ${request.skillId ?? null}::uuid, ${request.skillVersionId ?? null}::uuid,
                      ${isoDay}::date, ${request.reservedCredits}::int, ${request.leaseExpiresAt}::timestamptz)`;
    if (row.outcome !== 'taken') return { outcome: row.outcome };
    return {
      outcome: 'taken',
      request: {
        id: row.id as string,
        fingerprint: row.fingerprint as string,
        status: row.status as string,
        conversationId: row.conversationId as string,
        responseBody: row.responseBody,
        errorCode: row.errorCode,
      },
    };
  }

  /** Extends the lease of a run still streaming (the instance generating it is alive). */
  async renewLease(id: string, until: Date): Promise<void> {
    await this.prisma.chatRequest.updateMany({ where: { id, status: 'streaming' }, data: { leaseExpiresAt: until } });
  }

  /**
   * Settles a run in one statement, only if it is still streaming (false when the sweeper failed it first):
   * the outcome on the request, and for a billed run the messages (after the conversation row is locked, so
   * two turns settling at once append one after the other) and the ledger entry (unique per request), and
   * the reservation turned into usage (`credits`, at most what was reserved).
   */
  async settle(run: Settlement): Promise<boolean> {
    const messageIds = run.messages.map(() => uuidv7(run.finishedAt.getTime()));
    const ledgerStatus = run.status === 'completed' ? 'completed' : 'partial';
    const [row] = await this.prisma.$queryRaw<{ settled: number }[]>`
      WITH finished AS (
        UPDATE "ChatRequest"
           SET status = ${run.status}::"ChatRequestStatus", "responseBody" = ${run.responseBody}, "errorCode" = ${run.errorCode}, "finishedAt" = ${run.finishedAt}
         WHERE id = ${run.id}::uuid AND status = 'streaming'
        RETURNING id, "userId", "conversationId", "usageDay", "reservedCredits"
      ), conversation AS (
        UPDATE "Conversation" c
           SET "updatedAt" = ${run.finishedAt},
               "skillId" = COALESCE(${run.skill?.skillId ?? null}::uuid, c."skillId"),
               "skillVersionId" = COALESCE(${run.skill?.skillVersionId ?? null}::uuid, c."skillVersionId")
          FROM finished f
         WHERE c.id = f."conversationId" AND ${run.billed}
        RETURNING c.id
      ), messages AS (
        INSERT INTO "Message" (id, "conversationId", "chatRequestId", role, content, "createdAt")
        SELECT m.id, c.id, ${run.id}::uuid, m.role::"MessageRole", m.content, ${run.finishedAt}
          FROM conversation c,
               unnest(${messageIds}::uuid[], ${run.messages.map((message) => message.role)}::text[], ${run.messages.map((message) => message.content)}::text[])
                 WITH ORDINALITY AS m(id, role, content, n)
         ORDER BY m.n
      ), ledger AS (
        INSERT INTO "LedgerEntry" (id, "userId", kind, status, "chatRequestId", "modelId", "conversationId", "skillId", "skillVersionId",
                                   "inputTokens", "outputTokens", credits, "createdAt")
        SELECT ${uuidv7(run.finishedAt.getTime())}::uuid, f."userId", 'usage', ${ledgerStatus}::"LedgerStatus", f.id, ${run.modelId}, f."conversationId",
               ${run.skill?.skillId ?? null}::uuid, ${run.skill?.skillVersionId ?? null}::uuid, ${run.inputTokens}::int, ${run.outputTokens}::int, ${run.credits}::int, ${run.finishedAt}
          FROM finished f
         WHERE ${run.billed}
      ), usage AS (
        UPDATE "DailyUsage" d
           SET reserved = d.reserved - f."reservedCredits", used = d.used + ${run.credits}::int
          FROM finished f
         WHERE d."userId" = f."userId" AND d.day = f."usageDay"
      )
      SELECT count(*)::int AS settled FROM finished`;
    return row.settled === 1;
  }

  /**
   * Fails every run whose lease expired (its instance died) and releases their reservations, in one
   * statement: a run is swept once even when several instances sweep at the same time.
   */
  async failExpiredRuns(now: Date): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      WITH swept AS (
        UPDATE "ChatRequest" SET status = 'failed', "errorCode" = 'generation_interrupted', "finishedAt" = ${now}
        WHERE status = 'streaming' AND "leaseExpiresAt" < ${now}
        RETURNING id, "userId", "usageDay", "reservedCredits"
      ), released AS (
        UPDATE "DailyUsage" d SET reserved = d.reserved - s.total
        FROM (SELECT "userId", "usageDay", SUM("reservedCredits")::int AS total FROM swept GROUP BY 1, 2) s
        WHERE d."userId" = s."userId" AND d.day = s."usageDay"
        RETURNING 1
      )
      SELECT id::text FROM swept`;
    return rows.map((row) => row.id);
  }
}
