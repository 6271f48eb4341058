import { Injectable } from '@nestjs/common';
import { uuidv7 } from '../common/ids';
import { PreparedStatement, PrismaService } from '../infra/prisma/prisma.service';
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

const FIND_BY_KEY: PreparedStatement = {
  name: 'chat_find_by_key',
  text: `SELECT id::text, fingerprint, status::text, "conversationId"::text AS "conversationId", "responseBody", "errorCode"
           FROM "ChatRequest" WHERE "userId" = $1::uuid AND "idempotencyKey" = $2`,
};

const CLAIM: PreparedStatement = {
  name: 'chat_claim',
  text: `SELECT outcome, id::text, fingerprint, status, "conversationId"::text AS "conversationId", "responseBody", "errorCode"
           FROM chat_claim($1::uuid, $2::uuid, $3, $4, $5::uuid, $6::boolean, $7, $8, $9::uuid, $10::uuid, $11::date, $12::int, $13::timestamptz)`,
};

/**
 * The settlement (see `settle`). $1 run id, $2 status, $3 body, $4 error code, $5 finished at, $6 billed,
 * $7 skill id, $8 skill version id, $9-$11 message ids, roles and contents, $12 ledger entry id, $13 ledger
 * status, $14 model id, $15 input tokens, $16 output tokens, $17 credits.
 */
const SETTLE: PreparedStatement = {
  name: 'chat_settle',
  text: `
    WITH finished AS (
      UPDATE "ChatRequest"
         SET status = $2::"ChatRequestStatus", "responseBody" = $3, "errorCode" = $4, "finishedAt" = $5::timestamptz
       WHERE id = $1::uuid AND status = 'streaming'
      RETURNING id, "userId", "conversationId", "usageDay", "reservedCredits"
    ), conversation AS (
      UPDATE "Conversation" c
         SET "updatedAt" = $5::timestamptz,
             "skillId" = COALESCE($7::uuid, c."skillId"),
             "skillVersionId" = COALESCE($8::uuid, c."skillVersionId")
        FROM finished f
       WHERE c.id = f."conversationId" AND $6::boolean
      RETURNING c.id
    ), messages AS (
      INSERT INTO "Message" (id, "conversationId", "chatRequestId", role, content, "createdAt")
      SELECT m.id, c.id, $1::uuid, m.role::"MessageRole", m.content, $5::timestamptz
        FROM conversation c, unnest($9::uuid[], $10::text[], $11::text[]) WITH ORDINALITY AS m(id, role, content, n)
       ORDER BY m.n
    ), ledger AS (
      INSERT INTO "LedgerEntry" (id, "userId", kind, status, "chatRequestId", "modelId", "conversationId", "skillId", "skillVersionId",
                                 "inputTokens", "outputTokens", credits, "createdAt")
      SELECT $12::uuid, f."userId", 'usage', $13::"LedgerStatus", f.id, $14, f."conversationId", $7::uuid, $8::uuid,
             $15::int, $16::int, $17::int, $5::timestamptz
        FROM finished f
       WHERE $6::boolean
    ), usage AS (
      UPDATE "DailyUsage" d
         SET reserved = d.reserved - f."reservedCredits", used = d.used + $17::int
        FROM finished f
       WHERE d."userId" = f."userId" AND d.day = f."usageDay"
    )
    SELECT count(*)::int AS settled FROM finished`,
};

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

  async findByKey(userId: string, idempotencyKey: string): Promise<StoredRequest | null> {
    const [row] = await this.prisma.statement<StoredRequest>(FIND_BY_KEY, [userId, idempotencyKey]);
    return row ?? null;
  }

  findOutcome(id: string): Promise<StoredRequest | null> {
    return this.prisma.chatRequest.findUnique({ where: { id }, select: OUTCOME });
  }

  /**
   * The idempotency claim, the plan's access to the model, the quota reservation and a new conversation,
   * in one statement (the `chat_claim` function of the migrations): all of it happens, or none of it.
   */
  async claim(request: NewChatRequest): Promise<ClaimResult> {
    const [row] = await this.prisma.statement<ClaimRow>(CLAIM, [
      request.id,
      request.userId,
      request.idempotencyKey,
      request.fingerprint,
      request.conversationId,
      request.newConversationTitle !== undefined,
      request.newConversationTitle ?? '',
      request.modelId,
      request.skillId ?? null,
      request.skillVersionId ?? null,
      request.usageDay.toISOString().slice(0, 10),
      request.reservedCredits,
      request.leaseExpiresAt,
    ]);
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
    const at = run.finishedAt.getTime();
    const [row] = await this.prisma.statement<{ settled: number }>(SETTLE, [
      run.id,
      run.status,
      run.responseBody,
      run.errorCode,
      run.finishedAt,
      run.billed,
      run.skill?.skillId ?? null,
      run.skill?.skillVersionId ?? null,
      run.messages.map(() => uuidv7(at)),
      run.messages.map((message) => message.role),
      run.messages.map((message) => message.content),
      uuidv7(at),
      run.status === 'completed' ? 'completed' : 'partial',
      run.modelId,
      run.inputTokens,
      run.outputTokens,
      run.credits,
    ]);
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
