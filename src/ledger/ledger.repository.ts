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
  organizationId: true,
  inputTokens: true,
  cachedInputTokens: true,
  outputTokens: true,
  credits: true,
  requestedModelId: true,
  reason: true,
  steps: true,
  toolCalls: true,
  createdAt: true,
} as const;

/** A run's steps and tool calls as a line shows them: empty for a run without tools and for grants. */
export function runDetails(row: { steps: unknown; toolCalls: unknown }): {
  steps: { inputTokens: number; outputTokens: number }[];
  toolCalls: { id: string; tool: string; status: string; credits: number }[];
} {
  return {
    steps: Array.isArray(row.steps)
      ? (row.steps as { inputTokens: number; outputTokens: number }[])
      : [],
    toolCalls: Array.isArray(row.toolCalls)
      ? (
          row.toolCalls as {
            id: string;
            tool: string;
            status: string;
            credits?: number;
          }[]
        ).map((call) => ({ ...call, credits: call.credits ?? 0 }))
      : [],
  };
}

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
