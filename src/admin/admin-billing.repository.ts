import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { Prisma } from '../infra/prisma/generated/client';
import { Db, PrismaService } from '../infra/prisma/prisma.service';
import { LEDGER_LINE } from '../ledger/ledger.repository';

export interface NewCreditGrant {
  userId: string;
  adminId: string;
  credits: number;
  firstDay: Date;
  lastDay: Date;
  reason: string;
}

export interface UsageFilter {
  userId?: string;
  modelId?: string;
  /** Inclusive bounds of createdAt. */
  from?: Date;
  before?: Date;
}

@Injectable()
export class AdminBillingRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The grant and its ledger line, in the caller's transaction. */
  async insertGrant(db: Db, grant: NewCreditGrant): Promise<string> {
    const created = await db.creditGrant.create({
      data: grant,
      select: { id: true },
    });
    await db.ledgerEntry.create({
      data: {
        userId: grant.userId,
        kind: 'grant',
        status: 'granted',
        creditGrantId: created.id,
        credits: grant.credits,
        adminId: grant.adminId,
        reason: grant.reason,
      },
      select: { id: true },
    });
    return created.id;
  }

  findLedgerPage(filter: UsageFilter, limit: number, after?: Cursor) {
    return this.prisma.ledgerEntry.findMany({
      where: { ...ledgerWhere(filter), ...olderThan('createdAt', after) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: { ...LEDGER_LINE, userId: true, adminId: true },
    });
  }

  /** Billed runs per UTC day and model: requests, tokens, credits. */
  dailyUsage(filter: UsageFilter & { from: Date; before: Date }) {
    // Sums as bigint: one model's tokens in a day can pass 2^31.
    return this.prisma.$queryRaw<
      {
        day: string;
        modelId: string;
        requests: bigint;
        inputTokens: bigint;
        outputTokens: bigint;
        credits: bigint;
      }[]
    >`
      SELECT to_char(("createdAt" AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, "modelId",
             count(*) AS requests, sum("inputTokens")::bigint AS "inputTokens", sum("outputTokens")::bigint AS "outputTokens", sum(credits)::bigint AS credits
      FROM "LedgerEntry"
      WHERE kind = 'usage' AND "modelId" IS NOT NULL AND "createdAt" >= ${filter.from} AND "createdAt" < ${filter.before}
        ${filter.userId ? Prisma.sql`AND "userId" = ${filter.userId}::uuid` : Prisma.empty}
        ${filter.modelId ? Prisma.sql`AND "modelId" = ${filter.modelId}` : Prisma.empty}
      GROUP BY 1, 2
      ORDER BY 1, 2`;
  }
}

function ledgerWhere(filter: UsageFilter): Prisma.LedgerEntryWhereInput {
  return {
    ...(filter.userId ? { userId: filter.userId } : {}),
    ...(filter.modelId ? { modelId: filter.modelId } : {}),
    ...(filter.from || filter.before
      ? {
          createdAt: {
            ...(filter.from ? { gte: filter.from } : {}),
            ...(filter.before ? { lt: filter.before } : {}),
          },
        }
      : {}),
  };
}

export type AdminLedgerRow = Awaited<
  ReturnType<AdminBillingRepository['findLedgerPage']>
>[number];
