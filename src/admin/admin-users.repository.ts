import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

const SUMMARY = {
  id: true,
  email: true,
  role: true,
  disabledAt: true,
  deletedAt: true,
  emailVerifiedAt: true,
  totpEnabledAt: true,
  createdAt: true,
  planCode: true,
  plan: { select: { code: true, name: true } },
} as const;

/** The transaction lock of admin changes (AdminActionsGate); account erasure takes it too, for the last-admin rule. */
export const ADMIN_ACTIONS_LOCK = 'admin-actions';

export interface LockedAccount {
  id: string;
  email: string;
  role: 'user' | 'admin';
  planCode: string;
  planSubscriptionId: string | null;
  planSetByAdmin: boolean;
  disabledAt: Date | null;
  /** Set once the account was erased: it is a tombstone kept for the ledger, which no admin change applies to. */
  deletedAt: Date | null;
}

@Injectable()
export class AdminUsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: 15_000 });
  }

  findPage(emailContains: string | undefined, limit: number, after?: Cursor) {
    return this.prisma.user.findMany({
      where: {
        ...(emailContains
          ? { email: { contains: emailContains, mode: 'insensitive' as const } }
          : {}),
        ...olderThan('createdAt', after),
      },
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
          select: {
            id: true,
            createdAt: true,
            lastSeenAt: true,
            expiresAt: true,
            userAgent: true,
            ip: true,
          },
        },
      },
    });
  }

  findActivePlanCode(code: string) {
    return this.prisma.plan.findFirst({
      where: { code, active: true },
      select: { code: true },
    });
  }

  /**
   * NO KEY UPDATE: the audit row and the grant this transaction writes hold key-share locks on the acting
   * admin's row, which another admin's transaction may be changing; a full FOR UPDATE would deadlock them.
   * It still waits for a sign-in that is creating a session (which locks the row FOR SHARE).
   */
  async lockAccount(db: Db, id: string): Promise<LockedAccount | null> {
    const [row] = await db.$queryRaw<LockedAccount[]>`
      SELECT id::text, email, role::text AS role, "planCode", "planSubscriptionId"::text AS "planSubscriptionId", "planSetByAdmin", "disabledAt", "deletedAt"
      FROM "User" WHERE id = ${id}::uuid FOR NO KEY UPDATE`;
    return row ?? null;
  }

  /**
   * Serialises admin changes for the transaction: two admins acting on each other at once (demote, disable,
   * grant) queue instead of deadlocking, and the "another admin remains" check cannot be passed twice.
   */
  async lockAdminActions(db: Db): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${ADMIN_ACTIONS_LOCK}::text, 0))`;
  }

  /** Whether the account is still an active admin (re-checked inside the change's transaction). */
  async isActiveAdmin(db: Db, id: string): Promise<boolean> {
    const row = await db.user.findFirst({
      where: { id, role: 'admin', disabledAt: null },
      select: { id: true },
    });
    return row !== null;
  }

  countActiveAdminsOtherThan(db: Db, id: string): Promise<number> {
    return db.user.count({
      where: { role: 'admin', disabledAt: null, id: { not: id } },
    });
  }

  async setRole(db: Db, id: string, role: 'user' | 'admin'): Promise<void> {
    await db.user.update({
      where: { id },
      data: { role },
      select: { id: true },
    });
  }

  /**
   * The admin's plan: linked to the user's subscription of that plan when there is one (billing manages it
   * again), otherwise marked as the admin's, which renewals and lapses leave alone.
   */
  async setPlan(
    db: Db,
    id: string,
    planCode: string,
    planSubscriptionId: string | null,
  ): Promise<void> {
    await db.user.update({
      where: { id },
      data: {
        planCode,
        planSubscriptionId,
        planSetByAdmin: planSubscriptionId === null,
      },
      select: { id: true },
    });
  }

  /**
   * Disabling ends every session and voids unused reset links at once (the guard also refuses disabled
   * accounts); an account already disabled keeps its first time.
   */
  async disable(db: Db, id: string, at: Date): Promise<number> {
    await db.user.updateMany({
      where: { id, disabledAt: null },
      data: { disabledAt: at },
    });
    await db.passwordResetToken.updateMany({
      where: { userId: id, usedAt: null },
      data: { usedAt: at },
    });
    const ended = await db.session.deleteMany({ where: { userId: id } });
    return ended.count;
  }

  /** Turns two-factor sign-in off (secret, recovery codes, pending sign-ins): whether it was on. */
  async resetTwoFactor(db: Db, id: string): Promise<boolean> {
    const reset = await db.user.updateMany({
      where: { id, totpSecret: { not: null } },
      data: { totpSecret: null, totpEnabledAt: null, totpLastStep: null },
    });
    await db.recoveryCode.deleteMany({ where: { userId: id } });
    await db.twoFactorChallenge.deleteMany({ where: { userId: id } });
    return reset.count === 1;
  }

  async enable(db: Db, id: string): Promise<void> {
    await db.user.update({
      where: { id },
      data: { disabledAt: null },
      select: { id: true },
    });
  }

  /**
   * Accounts in ADMIN_EMAILS with a verified email that are not admins yet, promoted at start; except those
   * an admin demoted through the API (an audited decision that a restart must not undo).
   */
  async promoteConfiguredAdmins(
    db: Db,
    emails: string[],
  ): Promise<{ id: string; email: string }[]> {
    if (emails.length === 0) return [];
    return db.$queryRaw<{ id: string; email: string }[]>`
      UPDATE "User" u SET role = 'admin', "updatedAt" = now()
      WHERE u.email = ANY(${emails}::text[]) AND u.role = 'user' AND u."emailVerifiedAt" IS NOT NULL AND u."deletedAt" IS NULL
        AND NOT EXISTS (SELECT 1 FROM "AuditLog" a
                         WHERE a."targetType" = 'user' AND a."targetId" = u.id::text
                           AND a.action = 'user.role' AND a."adminId" IS NOT NULL)
      RETURNING u.id::text, u.email`;
  }
}

export type AdminUserRow = Awaited<
  ReturnType<AdminUsersRepository['findPage']>
>[number];
