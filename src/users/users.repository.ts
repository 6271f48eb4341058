import { Injectable } from '@nestjs/common';
import { Prisma } from '../infra/prisma/generated/client';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

const publicUser = {
  id: true,
  email: true,
  role: true,
  createdAt: true,
  emailVerifiedAt: true,
  totpEnabledAt: true,
  plan: { select: { code: true, name: true } },
} as const;

export type PublicUserRow = Prisma.UserGetPayload<{
  select: typeof publicUser;
}>;

@Injectable()
export class UsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Creates the account, or answers null when the email is already registered (unique constraint). */
  /** An account created as an admin (ADMIN_EMAILS) is audited in the same transaction. */
  async createUserUnlessEmailTaken(
    email: string,
    passwordHash: string,
    role: 'admin' | 'user',
  ): Promise<PublicUserRow | null> {
    try {
      return await this.prisma.$transaction(async (db) => {
        const user = await db.user.create({
          data: { email, passwordHash, role },
          select: publicUser,
        });
        if (role === 'admin')
          await db.auditLog.create({
            data: configuredAdminAudit(user.id),
            select: { id: true },
          });
        return user;
      });
    } catch (error) {
      if (
        error instanceof Prisma.PrismaClientKnownRequestError &&
        error.code === 'P2002'
      )
        return null;
      throw error;
    }
  }

  /** The account as login needs it: its public fields plus what decides whether it may sign in. */
  findLoginCandidate(email: string) {
    return this.prisma.user.findUnique({
      where: { email },
      select: { ...publicUser, passwordHash: true, disabledAt: true },
    });
  }

  findPublicUser(id: string): Promise<PublicUserRow | null> {
    return this.prisma.user.findUnique({ where: { id }, select: publicUser });
  }

  /** The password hash of an account (null: it signs in through Google or GitHub only). */
  async findPasswordHash(id: string): Promise<string | null> {
    const row = await this.prisma.user.findUnique({
      where: { id },
      select: { passwordHash: true },
    });
    return row?.passwordHash ?? null;
  }

  /**
   * Replaces the password only if it is still the one checked (a concurrent change wins once), and in the
   * same transaction ends every other session, voids reset links and pending second-factor sign-ins.
   */
  replacePassword(
    userId: string,
    checkedHash: string,
    newHash: string,
    keepSessionTokenHash: string,
    now: Date,
  ): Promise<boolean> {
    return this.prisma.$transaction(async (db) => {
      const changed = await db.user.updateMany({
        where: { id: userId, passwordHash: checkedHash },
        data: { passwordHash: newHash },
      });
      if (changed.count === 0) return false;
      await db.session.deleteMany({
        where: { userId, tokenHash: { not: keepSessionTokenHash } },
      });
      await db.passwordResetToken.updateMany({
        where: { userId, usedAt: null },
        data: { usedAt: now },
      });
      await db.twoFactorChallenge.deleteMany({ where: { userId } });
      return true;
    });
  }

  /**
   * The owner proved the address: marks it verified (keeping the first time) and, if it is listed in
   * ADMIN_EMAILS and no admin ever demoted the account, promotes it, audited, in the same transaction.
   */
  async markEmailVerified(
    userId: string,
    adminEmails: string[],
    now: Date,
    db?: Db,
  ): Promise<void> {
    if (!db)
      return this.prisma.$transaction((tx) =>
        this.markEmailVerified(userId, adminEmails, now, tx),
      );
    await db.user.updateMany({
      where: { id: userId, emailVerifiedAt: null },
      data: { emailVerifiedAt: now },
    });
    if (adminEmails.length === 0) return;
    const promoted = await db.$queryRaw<{ id: string }[]>`
      UPDATE "User" u SET role = 'admin', "updatedAt" = now()
      WHERE u.id = ${userId}::uuid AND u.role = 'user' AND u.email = ANY(${adminEmails}::text[]) AND u."deletedAt" IS NULL
        AND NOT EXISTS (SELECT 1 FROM "AuditLog" a
                         WHERE a."targetType" = 'user' AND a."targetId" = u.id::text
                           AND a.action = 'user.role' AND a."adminId" IS NOT NULL)
      RETURNING u.id::text`;
    if (promoted.length > 0)
      await db.auditLog.create({
        data: configuredAdminAudit(userId),
        select: { id: true },
      });
  }
}

/** The audit entry of an account that became admin through ADMIN_EMAILS (no admin did it). */
export function configuredAdminAudit(userId: string) {
  return {
    adminId: null,
    action: 'user.role',
    targetType: 'user',
    targetId: userId,
    before: { role: 'user' },
    after: { role: 'admin' },
    reason: 'ADMIN_EMAILS',
  };
}
