import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

const SUMMARY = { id: true, email: true, role: true, disabledAt: true, createdAt: true, planCode: true, plan: { select: { code: true, name: true } } } as const;

export interface LockedAccount {
  id: string;
  email: string;
  role: 'user' | 'admin';
  planCode: string;
  disabledAt: Date | null;
}

@Injectable()
export class AdminUsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: 15_000 });
  }

  findPage(emailContains: string | undefined, limit: number, after?: Cursor) {
    return this.prisma.user.findMany({
      where: { ...(emailContains ? { email: { contains: emailContains, mode: 'insensitive' as const } } : {}), ...olderThan('createdAt', after) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: SUMMARY,
    });
  }

  findDetail(id: string, now: Date) {
    return this.prisma.user.findUnique({
      where: { id },
      select: {
        ...SUMMARY,
        sessions: {
          where: { expiresAt: { gt: now } },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          select: { id: true, createdAt: true, lastSeenAt: true, expiresAt: true, userAgent: true, ip: true },
        },
      },
    });
  }

  findActivePlanCode(code: string) {
    return this.prisma.plan.findFirst({ where: { code, active: true }, select: { code: true } });
  }

  async lockAccount(db: Db, id: string): Promise<LockedAccount | null> {
    const [row] = await db.$queryRaw<LockedAccount[]>`
      SELECT id::text, email, role::text AS role, "planCode", "disabledAt" FROM "User" WHERE id = ${id}::uuid FOR UPDATE`;
    return row ?? null;
  }

  /**
   * Serialises every change that could remove an admin (demote, disable) for the transaction, so two admins
   * demoting each other at once cannot both pass the "another admin remains" check.
   */
  async lockAdminRoster(db: Db): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('admin-roster'::text, 0))`;
  }

  countActiveAdminsOtherThan(db: Db, id: string): Promise<number> {
    return db.user.count({ where: { role: 'admin', disabledAt: null, id: { not: id } } });
  }

  async setRole(db: Db, id: string, role: 'user' | 'admin'): Promise<void> {
    await db.user.update({ where: { id }, data: { role }, select: { id: true } });
  }

  /** A plan set by an admin comes from no subscription: renewals leave it alone (see billing). */
  async setPlan(db: Db, id: string, planCode: string): Promise<void> {
    await db.user.update({ where: { id }, data: { planCode, planSubscriptionId: null }, select: { id: true } });
  }

  /** Disabling ends every session at once (the guard also refuses disabled accounts). */
  async disable(db: Db, id: string, at: Date): Promise<number> {
    await db.user.update({ where: { id }, data: { disabledAt: at }, select: { id: true } });
    const ended = await db.session.deleteMany({ where: { userId: id } });
    return ended.count;
  }

  async enable(db: Db, id: string): Promise<void> {
    await db.user.update({ where: { id }, data: { disabledAt: null }, select: { id: true } });
  }

  /** Accounts in ADMIN_EMAILS that are not admins yet; promoted at start. */
  async promoteConfiguredAdmins(db: Db, emails: string[]): Promise<{ id: string; email: string }[]> {
    if (emails.length === 0) return [];
    return db.$queryRaw<{ id: string; email: string }[]>`
      UPDATE "User" SET role = 'admin', "updatedAt" = now() WHERE email = ANY(${emails}::text[]) AND role = 'user' RETURNING id::text, email`;
  }
}

export type AdminUserRow = Awaited<ReturnType<AdminUsersRepository['findPage']>>[number];
