import { Injectable } from '@nestjs/common';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

export interface NewChatRequest {
  id: string;
  userId: string;
  idempotencyKey: string;
  fingerprint: string;
  conversationId: string;
  modelId: string;
  skillId?: string;
  skillVersionId?: string;
  usageDay: Date;
  reservedCredits: number;
  leaseExpiresAt: Date;
}

export interface FinishedChatRequest {
  status: 'completed' | 'failed';
  responseBody: string | null;
  errorCode: string | null;
  finishedAt: Date;
}

const OUTCOME = { id: true, fingerprint: true, status: true, conversationId: true, responseBody: true, errorCode: true } as const;

@Injectable()
export class ChatRequestsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The claim, reservation and settlement each run in one transaction; waiting for a connection is bounded. */
  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: 15_000 });
  }

  findByKey(userId: string, idempotencyKey: string) {
    return this.prisma.chatRequest.findUnique({ where: { userId_idempotencyKey: { userId, idempotencyKey } }, select: OUTCOME });
  }

  findOutcome(id: string) {
    return this.prisma.chatRequest.findUnique({ where: { id }, select: OUTCOME });
  }

  /**
   * The idempotency claim: INSERT .. ON CONFLICT DO NOTHING on (userId, idempotencyKey). A concurrent claim
   * of the same key waits for the first to commit or roll back, so exactly one wins. False when taken.
   */
  async insertClaim(db: Db, request: NewChatRequest): Promise<boolean> {
    const result = await db.chatRequest.createMany({ data: [{ ...request, status: 'streaming' }], skipDuplicates: true });
    return result.count === 1;
  }

  /** Extends the lease of a run still streaming (the instance generating it is alive). */
  async renewLease(id: string, until: Date): Promise<void> {
    await this.prisma.chatRequest.updateMany({ where: { id, status: 'streaming' }, data: { leaseExpiresAt: until } });
  }

  /** Records the outcome only if the run is still streaming; false when the sweeper already failed it. */
  async markFinished(db: Db, id: string, outcome: FinishedChatRequest): Promise<boolean> {
    const result = await db.chatRequest.updateMany({ where: { id, status: 'streaming' }, data: outcome });
    return result.count === 1;
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
