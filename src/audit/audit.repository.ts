import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { Prisma } from '../infra/prisma/generated/client';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

export interface AuditEntry {
  adminId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  before?: Prisma.InputJsonValue;
  after?: Prisma.InputJsonValue;
  reason?: string | null;
}

const ENTRY = {
  id: true,
  action: true,
  targetType: true,
  targetId: true,
  before: true,
  after: true,
  reason: true,
  createdAt: true,
  admin: { select: { id: true, email: true } },
} as const;

@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Written in the same transaction as the change it records. */
  async record(db: Db, entry: AuditEntry): Promise<void> {
    await db.auditLog.create({ data: entry, select: { id: true } });
  }

  findPage(
    filter: { targetType?: string; targetId?: string },
    limit: number,
    after?: Cursor,
  ) {
    return this.prisma.auditLog.findMany({
      where: { ...filter, ...olderThan('createdAt', after) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: ENTRY,
    });
  }
}

export type AuditRow = Awaited<ReturnType<AuditRepository['findPage']>>[number];
