import { wellFormed } from '../common/text/storable';
import { Injectable } from '@nestjs/common';
import { uuidv7 } from '../common/ids';
import type { ChatRequestStatus } from '../infra/prisma/generated/client';
import {
  PreparedStatement,
  PrismaService,
} from '../infra/prisma/prisma.service';
import { ChatMessage } from '../models/providers/model-provider';
import { RunUsage } from './live/live-event';

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
  /** The run's lease, counted by the database's clock from the end of the claim. */
  leaseMs: number;
  /** The organization whose pool pays (docs/adr/0062-organizations.md); absent: the user pays. */
  organizationId?: string;
}

/** A request under its idempotency key, as a retry needs it: to replay it, join it, or refuse the key. */
export interface StoredRequest {
  id: string;
  fingerprint: string;
  status: ChatRequestStatus;
  /** Null once its conversation was deleted (its text went with it). */
  conversationId: string | null;
  responseBody: string | null;
  errorCode: string | null;
}

/** A stored request with what its replay as events shows: the model, and the usage of a billed run. */
export interface StoredRun extends StoredRequest {
  /** The model that answered (a fallback, perhaps). */
  modelId: string;
  /** The model asked for, when a fallback answered instead. */
  requestedModelId?: string;
  /** Null while streaming and for a run that billed nothing. */
  usage: RunUsage | null;
}

export type ClaimResult =
  | { outcome: 'claimed' }
  | { outcome: 'model_not_allowed' }
  | { outcome: 'quota_exceeded' }
  | { outcome: 'not_found' }
  | { outcome: 'not_member' }
  | { outcome: 'org_plan_required' }
  | { outcome: 'member_quota_exceeded' }
  | { outcome: 'taken'; request: StoredRun };

/** How a run ended and what it costs; `billed` runs store their messages and a ledger entry. */
export interface Settlement {
  id: string;
  status: 'completed' | 'failed' | 'stopped';
  responseBody: string;
  errorCode: string | null;
  finishedAt: Date;
  billed: boolean;
  /** The turn's messages and the answer, appended to the conversation in this order. */
  messages: ChatMessage[];
  /**
   * Where the messages go in the conversation's tree: after `parentId` (null: from the start), for a
   * regenerated answer or an edited message; by default after the conversation's current message.
   */
  anchor?: { parentId: string | null };
  /** The model billed: the one that answered. */
  modelId: string;
  /** The model asked for, when a fallback answered instead (docs/adr/0063). */
  requestedModelId?: string;
  skill?: { skillId: string; skillVersionId: string };
  inputTokens: number;
  /** Of inputTokens, those read from the provider's prompt cache. */
  cachedInputTokens: number;
  outputTokens: number;
  credits: number;
  /** A run that used tools: each model call's tokens, and its calls, for its ledger entry. */
  steps?: {
    inputTokens: number;
    outputTokens: number;
    cachedInputTokens?: number;
  }[];
  toolCalls?: { id: string; tool: string; status: string; credits: number }[];
}

interface RunRow extends StoredRequest {
  modelId: string;
  answeredModelId: string | null;
  billedModelId: string | null;
  inputTokens: number | null;
  cachedInputTokens: number | null;
  outputTokens: number | null;
  credits: number | null;
}

/** The stored run's columns, as the view chat_stored_runs has them (prisma/sql/010_chat_stored_runs.sql). */
const STORED_RUN_COLUMNS = `id::text, fingerprint, status, "conversationId"::text AS "conversationId", "responseBody", "errorCode",
       "modelId", "answeredModelId", "billedModelId", "inputTokens", "cachedInputTokens", "outputTokens", credits`;

const FIND_BY_KEY: PreparedStatement = {
  // Unnamed: planned at each execution (PreparedStatement.name).
  text: `SELECT ${STORED_RUN_COLUMNS} FROM chat_request_by_key($1::uuid, $2)`,
};

const FIND_BY_ID: PreparedStatement = {
  // Unnamed: planned at each execution (PreparedStatement.name).
  text: `SELECT ${STORED_RUN_COLUMNS} FROM chat_stored_runs WHERE id = $1::uuid`,
};

/** A row of chat_claim_many: the stored run's columns are there (non-null) only when the key was taken. */
type ClaimRow = {
  /** The claim's position in the batch, from 1. */
  n: number;
} & (
  | {
      outcome: Exclude<ClaimResult['outcome'], 'taken'>;
    }
  | ({ outcome: 'taken' } & RunRow)
);

/**
 * chat_claim_many_runs (prisma/sql/035_chat_claim_many_runs.sql): one JSON array of claims, fields by name;
 * chat_claim_many's rows with, for a taken key, the stored run's later columns (docs/adr/0066).
 */
const CLAIM_MANY: PreparedStatement = {
  name: 'chat_claim_many_runs_json',
  text: `SELECT n, outcome, id::text, fingerprint, status, "conversationId"::text AS "conversationId", "responseBody",
       "errorCode", "modelId", "answeredModelId", "billedModelId", "inputTokens", "cachedInputTokens",
       "outputTokens", credits
  FROM chat_claim_many_runs($1::jsonb)`,
};

const RENEW_LEASES: PreparedStatement = {
  // Unnamed: planned at each execution (PreparedStatement.name).
  text: `UPDATE "ChatRequest" SET "leaseExpiresAt" = clock_timestamp() + $2::int * interval '1 millisecond'
          WHERE id = ANY($1::uuid[]) AND status = 'streaming'
          RETURNING id::text, "stopRequestedAt" IS NOT NULL AS "stopRequested"`,
};

/** chat_settle_many (prisma/sql/040_chat_settle_many.sql): one JSON array of runs with their messages. */
const SETTLE_MANY: PreparedStatement = {
  name: 'chat_settle_many_json',
  text: `SELECT n FROM chat_settle_many($1::jsonb)`,
};

/**
 * The statements every chat sends, for test/chat-query-plans.e2e-spec.ts: their plans (and those of the
 * functions they call) must look rows up by index, whatever the tables hold (docs/adr/0066).
 */
export const CHAT_RUN_STATEMENTS = {
  claimMany: CLAIM_MANY,
  settleMany: SETTLE_MANY,
  findByKey: FIND_BY_KEY,
  findById: FIND_BY_ID,
  renewLeases: RENEW_LEASES,
} as const;

/** docs/adr/0030-group-commit.md docs/adr/0060-sql-definitions-in-files.md */
@Injectable()
export class ChatRequestsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Which of the functions and views this code calls the database lacks (prisma/sql not applied). */
  /** Reserves `credits` more for a streaming run within its user's limit; false when the limit refuses. */
  async growReservation(runId: string, credits: number): Promise<boolean> {
    const [row] = await this.prisma.$queryRaw<{ grown: boolean }[]>`
      SELECT "chat_grow_reservation"(${runId}::uuid, ${credits}::int) AS grown`;
    return row?.grown === true;
  }

  async missingDefinitions(): Promise<string[]> {
    const [row] = await this.prisma.$queryRaw<{ missing: string[] }[]>`
      SELECT array_remove(ARRAY[
        CASE WHEN to_regprocedure('chat_claim_many(jsonb)') IS NULL THEN 'chat_claim_many(jsonb)' END,
        CASE WHEN to_regprocedure('chat_claim_many_runs(jsonb)') IS NULL THEN 'chat_claim_many_runs(jsonb)' END,
        CASE WHEN to_regprocedure('chat_settle_many(jsonb)') IS NULL THEN 'chat_settle_many(jsonb)' END,
        CASE WHEN to_regprocedure('chat_request_by_key(uuid, text)') IS NULL THEN 'chat_request_by_key(uuid, text)' END,
        CASE WHEN to_regprocedure('chat_grow_reservation(uuid, integer)') IS NULL THEN 'chat_grow_reservation(uuid, integer)' END,
        CASE WHEN to_regprocedure('chat_claim_org(uuid, uuid, uuid, text, text, uuid, boolean, text, text, uuid, uuid, date, integer, timestamptz)') IS NULL THEN 'chat_claim_org' END,
        CASE WHEN to_regclass('chat_stored_runs') IS NULL THEN 'chat_stored_runs' END
      ], NULL) AS missing`;
    return row?.missing ?? [];
  }

  async findByKey(
    userId: string,
    idempotencyKey: string,
  ): Promise<StoredRun | null> {
    const [row] = await this.prisma.statement<RunRow>(FIND_BY_KEY, [
      userId,
      idempotencyKey,
    ]);
    return row ? toStoredRun(row) : null;
  }

  async findOutcome(id: string): Promise<StoredRun | null> {
    const [row] = await this.prisma.statement<RunRow>(FIND_BY_ID, [id]);
    return row ? toStoredRun(row) : null;
  }

  /** Asks the instance generating the run to stop it (it reads the flag at its next lease renewal at the latest). */
  async markStopRequested(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.prisma.chatRequest.updateMany({
      where: { id: { in: ids }, status: 'streaming', stopRequestedAt: null },
      data: { stopRequestedAt: new Date() },
    });
  }

  /**
   * Claims runs in one statement and one transaction (the `chat_claim_many` function of the migrations), in
   * the order given: each claim (the key answered if already taken, plan access, quota reservation, new
   * conversation) happens wholly or not at all. Answers one result per request, in order.
   */
  async claimMany(requests: NewChatRequest[]): Promise<ClaimResult[]> {
    const claims = requests.map((request) => ({
      id: request.id,
      userId: request.userId,
      idempotencyKey: request.idempotencyKey,
      fingerprint: request.fingerprint,
      conversationId: request.conversationId,
      newConversation: request.newConversationTitle !== undefined,
      title: wellFormed(request.newConversationTitle ?? ''),
      modelId: request.modelId,
      skillId: request.skillId ?? null,
      skillVersionId: request.skillVersionId ?? null,
      usageDay: request.usageDay.toISOString().slice(0, 10),
      reservedCredits: request.reservedCredits,
      leaseMs: request.leaseMs,
      organizationId: request.organizationId ?? null,
    }));
    const rows = await this.prisma.statement<ClaimRow>(CLAIM_MANY, [
      JSON.stringify(claims),
    ]);
    const results = new Array<ClaimResult>(requests.length);
    for (const row of rows) results[row.n - 1] = toClaimResult(row);
    return results;
  }

  /**
   * Extends, by the database's clock, the leases of runs still streaming (the instance generating them is
   * alive). Answers those of them whose stop was asked for.
   */
  async renewLeases(ids: string[], leaseMs: number): Promise<string[]> {
    const rows = await this.prisma.statement<{
      id: string;
      stopRequested: boolean;
    }>(RENEW_LEASES, [ids, leaseMs]);
    return rows.filter((row) => row.stopRequested).map((row) => row.id);
  }

  /** A fallback answers the run (before its first token goes out): followers on other instances name it. */
  async recordAnsweringModel(id: string, modelId: string): Promise<void> {
    await this.prisma.chatRequest.updateMany({
      where: { id, status: 'streaming' },
      data: { answeredModelId: modelId },
    });
  }

  /**
   * Keeps the text a run had delivered when the sweeper failed it (its instance had lost the database
   * for longer than the lease): a retry then replays that text and the failure. Nothing is billed.
   */
  async keepInterruptedText(id: string, text: string): Promise<void> {
    await this.prisma.chatRequest.updateMany({
      // Not once the conversation was deleted: its text went with it.
      where: {
        id,
        status: 'failed',
        errorCode: 'generation_interrupted',
        responseBody: null,
        conversationId: { not: null },
      },
      data: { responseBody: text },
    });
  }

  /** The files a run's user turn attached (after its claim; only runs with files pay this statement). */
  async recordAttachedFiles(
    chatRequestId: string,
    files: { id: string; name: string; kind: string }[],
  ): Promise<void> {
    await this.prisma.$executeRaw`
      INSERT INTO "ChatRequestFile" ("chatRequestId", position, "fileId", name, kind)
      SELECT ${chatRequestId}::uuid, (f.n - 1)::int, f.id, f.name, f.kind::"FileKind"
      FROM unnest(${files.map((file) => file.id)}::uuid[],
                  ${files.map((file) => file.name)}::text[],
                  ${files.map((file) => file.kind)}::text[]) WITH ORDINALITY AS f(id, name, kind, n)
      ON CONFLICT DO NOTHING`;
  }

  /**
   * Settles runs in one statement and one transaction (the `chat_settle_many` function), in the order
   * given, each only if still streaming: the outcome, for a billed run its messages, ledger entry (unique
   * per request) and the conversation's last activity, and the reservation turned into usage. Answers, per
   * run, whether it was settled (false: the sweeper had failed it).
   */
  async settleMany(runs: Settlement[]): Promise<boolean[]> {
    const settlements = runs.map((run) => ({
      id: run.id,
      status: run.status,
      responseBody: wellFormed(run.responseBody),
      errorCode: run.errorCode,
      finishedAt: run.finishedAt.toISOString(),
      billed: run.billed,
      skillId: run.skill?.skillId ?? null,
      skillVersionId: run.skill?.skillVersionId ?? null,
      modelId: run.modelId,
      requestedModelId: run.requestedModelId ?? null,
      inputTokens: run.inputTokens,
      cachedInputTokens: run.cachedInputTokens,
      outputTokens: run.outputTokens,
      credits: run.credits,
      ledgerId: uuidv7(run.finishedAt.getTime()),
      anchored: run.anchor !== undefined,
      parentId: run.anchor?.parentId ?? null,
      messages: run.messages.map((message) => ({
        id: uuidv7(run.finishedAt.getTime()),
        role: message.role,
        content: wellFormed(message.content),
      })),
      // Left out for a run without tools: the statement is what it was.
      ...(run.steps ? { steps: run.steps } : {}),
      ...(run.toolCalls ? { toolCalls: run.toolCalls } : {}),
    }));
    const rows = await this.prisma.statement<{ n: number }>(SETTLE_MANY, [
      JSON.stringify(settlements),
    ]);
    const settled = new Array<boolean>(runs.length).fill(false);
    for (const row of rows) settled[row.n - 1] = true;
    return settled;
  }

  /**
   * Fails every run whose lease expired by the database's clock (`now()`, the statement's own transaction
   * start: unlike clock_timestamp() it can bound the status/lease index), except the runs this
   * instance is generating itself, and releases their reservations, in one statement: a run is swept once
   * even when several instances sweep at the same time.
   */
  async failExpiredRuns(ownRuns: string[]): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      WITH swept AS (
        UPDATE "ChatRequest" SET status = 'failed', "errorCode" = 'generation_interrupted', "finishedAt" = now()
        WHERE status = 'streaming' AND "leaseExpiresAt" < now() AND NOT (id = ANY(${ownRuns}::uuid[]))
        RETURNING id, "userId", "usageDay", "reservedCredits", "organizationId"
      ), released AS (
        UPDATE "DailyUsage" d SET reserved = d.reserved - s.total
        FROM (SELECT "userId", "usageDay", SUM("reservedCredits")::int AS total FROM swept
              WHERE "organizationId" IS NULL GROUP BY 1, 2) s
        WHERE d."userId" = s."userId" AND d.day = s."usageDay"
        RETURNING 1
      ), pools AS (
        UPDATE "OrgDailyUsage" d SET reserved = d.reserved - s.total
        FROM (SELECT "organizationId", "usageDay", SUM("reservedCredits")::int AS total FROM swept
              WHERE "organizationId" IS NOT NULL GROUP BY 1, 2) s
        WHERE d."organizationId" = s."organizationId" AND d.day = s."usageDay"
        RETURNING 1
      ), members AS (
        UPDATE "OrgMemberDailyUsage" d SET reserved = d.reserved - s.total
        FROM (SELECT "organizationId", "userId", "usageDay", SUM("reservedCredits")::int AS total FROM swept
              WHERE "organizationId" IS NOT NULL GROUP BY 1, 2, 3) s
        WHERE d."organizationId" = s."organizationId" AND d."userId" = s."userId" AND d.day = s."usageDay"
        RETURNING 1
      )
      SELECT id::text FROM swept`;
    return rows.map((row) => row.id);
  }
}

function toClaimResult(row: ClaimRow): ClaimResult {
  if (row.outcome !== 'taken') return { outcome: row.outcome };
  return { outcome: 'taken', request: toStoredRun(row) };
}

function toStoredRun({
  inputTokens,
  cachedInputTokens,
  outputTokens,
  credits,
  ...run
}: RunRow): StoredRun {
  const answeredBy = run.answeredModelId ?? run.modelId;
  return {
    id: run.id,
    fingerprint: run.fingerprint,
    status: run.status,
    conversationId: run.conversationId,
    responseBody: run.responseBody,
    errorCode: run.errorCode,
    modelId: answeredBy,
    ...(answeredBy !== run.modelId ? { requestedModelId: run.modelId } : {}),
    usage:
      credits === null
        ? null
        : {
            inputTokens: inputTokens ?? 0,
            cachedInputTokens: cachedInputTokens ?? 0,
            outputTokens: outputTokens ?? 0,
            credits,
            model: run.billedModelId ?? answeredBy,
          },
  };
}
