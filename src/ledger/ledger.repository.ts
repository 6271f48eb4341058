import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { PrismaService } from '../infra/prisma/prisma.service';

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
