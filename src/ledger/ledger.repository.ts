import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

export interface UsageEntry {
  userId: string;
  status: 'completed' | 'partial';
  chatRequestId: string;
  modelId: string;
  conversationId: string;
  skillId?: string;
  skillVersionId?: string;
  inputTokens: number;
  outputTokens: number;
  credits: number;
  createdAt: Date;
}

/** What a ledger line shows (the user's view; the admin view adds the user and the admin). */
export const LEDGER_LINE = {
  id: true,
  kind: true,
  status: true,
  modelId: true,
  conversationId: true,
  skillId: true,
  skillVersionId: true,
  inputTokens: true,
  outputTokens: true,
  credits: true,
  reason: true,
  createdAt: true,
} as const;

@Injectable()
export class LedgerRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The unique chatRequestId makes a second entry for the same request impossible. */
  async insertUsageEntry(db: Db, entry: UsageEntry): Promise<void> {
    await db.ledgerEntry.create({ data: { ...entry, kind: 'usage' }, select: { id: true } });
  }

  /** The user's entries newest first, after the cursor; `limit` + 1 rows to know if more follow. */
  findPageOfUser(userId: string, limit: number, after?: Cursor) {
    return this.prisma.ledgerEntry.findMany({
      where: { userId, ...olderThan('createdAt', after) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: LEDGER_LINE,
    });
  }
}
