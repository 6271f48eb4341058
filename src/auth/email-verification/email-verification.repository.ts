import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../infra/prisma/prisma.service';
import { UsersRepository } from '../../users/users.repository';

@Injectable()
export class EmailVerificationRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly users: UsersRepository,
  ) {}

  /** Whether the account's address is verified (read from the database, not the session cache). */
  async isVerified(userId: string): Promise<boolean> {
    const row = await this.prisma.user.findUnique({
      where: { id: userId },
      select: { emailVerifiedAt: true },
    });
    return row?.emailVerifiedAt != null;
  }

  async createToken(
    userId: string,
    email: string,
    tokenHash: string,
    expiresAt: Date,
  ): Promise<void> {
    await this.prisma.emailVerificationToken.create({
      data: { userId, email, tokenHash, expiresAt },
      select: { id: true },
    });
  }

  /**
   * In one transaction: consume the token (one conditional UPDATE: of two concurrent uses one wins), only
   * while the account still has the address it was sent to and is not disabled; void the account's other
   * links; mark the address verified (and apply ADMIN_EMAILS). The account id, or null for an unknown,
   * used, expired or stale token.
   */
  consumeToken(
    tokenHash: string,
    adminEmails: string[],
    now: Date,
  ): Promise<string | null> {
    return this.prisma.$transaction(async (db) => {
      const consumed = await db.$queryRaw<{ userId: string }[]>`
        UPDATE "EmailVerificationToken" t SET "usedAt" = ${now}
        FROM "User" u
        WHERE t."tokenHash" = ${tokenHash} AND t."usedAt" IS NULL AND t."expiresAt" > ${now}
          AND u.id = t."userId" AND u.email = t.email AND u."disabledAt" IS NULL AND u."deletedAt" IS NULL
        RETURNING t."userId"::text AS "userId"`;
      const userId = consumed[0]?.userId;
      if (!userId) return null;
      await db.emailVerificationToken.updateMany({
        where: { userId, usedAt: null },
        data: { usedAt: now },
      });
      await this.users.markEmailVerified(userId, adminEmails, now, db);
      return userId;
    });
  }
}
