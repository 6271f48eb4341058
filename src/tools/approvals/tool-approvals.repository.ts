import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../infra/prisma/prisma.service';

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired';

/** Approvals of tool calls: created pending, decided once by a conditional update (the first one wins). */
@Injectable()
export class ToolApprovalsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(approval: {
    id: string;
    executionId: string;
    chatRequestId: string;
    userId: string;
    expiresAt: Date;
  }): Promise<void> {
    await this.prisma.toolApproval.create({
      data: approval,
      select: { id: true },
    });
  }

  /** The owner's decision, if the approval is theirs, still pending and not expired; else false. */
  async decide(
    id: string,
    userId: string,
    decision: 'approved' | 'denied',
    now: Date,
  ): Promise<boolean> {
    const { count } = await this.prisma.toolApproval.updateMany({
      where: { id, userId, status: 'pending', expiresAt: { gt: now } },
      data: { status: decision, decidedAt: now },
    });
    return count > 0;
  }

  /** Ends a pending approval without the owner (expired, or denied by a stop); false once decided. */
  async close(
    id: string,
    status: 'expired' | 'denied',
    now: Date,
  ): Promise<boolean> {
    const { count } = await this.prisma.toolApproval.updateMany({
      where: { id, status: 'pending' },
      data: { status, decidedAt: now },
    });
    return count > 0;
  }

  async statusOf(id: string): Promise<ApprovalStatus | null> {
    const row = await this.prisma.toolApproval.findUnique({
      where: { id },
      select: { status: true },
    });
    return (row?.status as ApprovalStatus | undefined) ?? null;
  }

  /** Whether `userId` has this approval (decided or not). */
  async isOwned(id: string, userId: string): Promise<boolean> {
    return (
      (await this.prisma.toolApproval.count({ where: { id, userId } })) > 0
    );
  }
}
