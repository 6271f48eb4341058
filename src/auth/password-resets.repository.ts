import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infra/prisma/prisma.service';

@Injectable()
export class PasswordResetsRepository {
  constructor(private readonly prisma: PrismaService) {}

  findUserIdByEmail(email: string) {
    return this.prisma.user.findUnique({
      where: { email },
      select: { id: true, disabledAt: true },
    });
  }

  async createResetToken(
    userId: string,
    tokenHash: string,
    expiresAt: Date,
  ): Promise<void> {
    await this.prisma.passwordResetToken.create({
      data: { userId, tokenHash, expiresAt },
      select: { id: true },
    });
  }

  /**
   * In one transaction: consume the token (one conditional UPDATE, so of two concurrent uses exactly one
   * wins), set the new password hash, end every session and void the user's other reset tokens.
   * Answers false when the token is unknown, used or expired.
   */
  resetPasswordWithToken(
    tokenHash: string,
    passwordHash: string,
    now: Date,
  ): Promise<boolean> {
    return this.prisma.$transaction(async (db) => {
      // A disabled account's links do not work (disabling also voids them).
      const consumed = await db.$queryRaw<{ userId: string }[]>`
        UPDATE "PasswordResetToken" t SET "usedAt" = ${now}
        FROM "User" u
        WHERE t."tokenHash" = ${tokenHash} AND t."usedAt" IS NULL AND t."expiresAt" > ${now} AND u.id = t."userId" AND u."disabledAt" IS NULL
        RETURNING t."userId"`;
      const userId = consumed[0]?.userId;
      if (!userId) return false;
      await db.user.update({
        where: { id: userId },
        data: { passwordHash },
        select: { id: true },
      });
      await db.session.deleteMany({ where: { userId } });
      await db.passwordResetToken.updateMany({
        where: { userId, usedAt: null },
        data: { usedAt: now },
      });
      // A sign-in started with the old password must not finish with its second factor.
      await db.twoFactorChallenge.deleteMany({ where: { userId } });
      return true;
    });
  }
}
