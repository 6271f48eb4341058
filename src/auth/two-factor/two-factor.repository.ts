import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Db, PrismaService } from '../../infra/prisma/prisma.service';

/** An account's second factor as the checks read it. */
export interface TwoFactorState {
  totpSecret: string | null;
  totpEnabledAt: Date | null;
  totpLastStep: number | null;
}

/** A pending sign-in, locked for the duration of its check. */
export interface LockedChallenge {
  id: string;
  userId: string;
}

@Injectable()
export class TwoFactorRepository {
  constructor(private readonly prisma: PrismaService) {}

  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  async findState(
    userId: string,
    db: Db = this.prisma,
  ): Promise<TwoFactorState | null> {
    const row = await db.user.findUnique({
      where: { id: userId },
      select: { totpSecret: true, totpEnabledAt: true, totpLastStep: true },
    });
    return row
      ? {
          ...row,
          totpLastStep:
            row.totpLastStep === null ? null : Number(row.totpLastStep),
        }
      : null;
  }

  /** Stores a new secret awaiting its first code; false when 2FA is already on (its secret stays). */
  async storePendingSecret(
    userId: string,
    encryptedSecret: string,
  ): Promise<boolean> {
    const updated = await this.prisma.user.updateMany({
      where: { id: userId, totpEnabledAt: null },
      data: { totpSecret: encryptedSecret, totpLastStep: null },
    });
    return updated.count === 1;
  }

  /**
   * Turns 2FA on with the secret the code was checked against (a setup run meanwhile replaced it: false)
   * and replaces the recovery codes, in one transaction.
   */
  enable(
    userId: string,
    checkedSecret: string,
    step: number,
    recoveryCodeHashes: string[],
    now: Date,
  ): Promise<boolean> {
    return this.prisma.$transaction(async (db) => {
      const updated = await db.user.updateMany({
        where: { id: userId, totpEnabledAt: null, totpSecret: checkedSecret },
        data: { totpEnabledAt: now, totpLastStep: step },
      });
      if (updated.count === 0) return false;
      await db.recoveryCode.deleteMany({ where: { userId } });
      await db.recoveryCode.createMany({
        data: recoveryCodeHashes.map((codeHash) => ({ userId, codeHash })),
      });
      return true;
    });
  }

  /** Records the step of an accepted code, only if it is later than the last one accepted (no replay). */
  async acceptTotpStep(db: Db, userId: string, step: number): Promise<boolean> {
    const updated = await db.$executeRaw`
      UPDATE "User" SET "totpLastStep" = ${step}
      WHERE id = ${userId}::uuid AND "totpEnabledAt" IS NOT NULL AND ("totpLastStep" IS NULL OR "totpLastStep" < ${step})`;
    return updated === 1;
  }

  /** Spends an unused recovery code of the account; false when there is no such unused code. */
  async useRecoveryCode(
    db: Db,
    userId: string,
    codeHash: string,
    now: Date,
  ): Promise<boolean> {
    const used = await db.recoveryCode.updateMany({
      where: { userId, codeHash, usedAt: null },
      data: { usedAt: now },
    });
    return used.count === 1;
  }

  countUnusedRecoveryCodes(userId: string): Promise<number> {
    return this.prisma.recoveryCode.count({ where: { userId, usedAt: null } });
  }

  /** Turns 2FA off: secret, recovery codes and pending sign-ins go. */
  async disable(db: Db, userId: string): Promise<void> {
    await db.user.update({
      where: { id: userId },
      data: { totpSecret: null, totpEnabledAt: null, totpLastStep: null },
      select: { id: true },
    });
    await db.recoveryCode.deleteMany({ where: { userId } });
    await db.twoFactorChallenge.deleteMany({ where: { userId } });
  }

  /** A pending sign-in, in one statement that also purges expired ones. */
  async createChallenge(
    userId: string,
    tokenHash: string,
    expiresAt: Date,
  ): Promise<void> {
    await this.prisma.$executeRaw`
      WITH purge AS (DELETE FROM "TwoFactorChallenge" WHERE "expiresAt" < now())
      INSERT INTO "TwoFactorChallenge" (id, "userId", "tokenHash", "expiresAt") VALUES (${randomUUID()}::uuid, ${userId}::uuid, ${tokenHash}, ${expiresAt})`;
  }

  /** The unexpired challenge of a token whose account still has 2FA on and may sign in, locked FOR UPDATE. */
  async lockChallenge(
    db: Db,
    tokenHash: string,
    now: Date,
  ): Promise<LockedChallenge | null> {
    const [row] = await db.$queryRaw<LockedChallenge[]>`
      SELECT c.id::text AS id, c."userId"::text AS "userId"
      FROM "TwoFactorChallenge" c JOIN "User" u ON u.id = c."userId"
      WHERE c."tokenHash" = ${tokenHash} AND c."expiresAt" > ${now}
        AND u."totpEnabledAt" IS NOT NULL AND u."disabledAt" IS NULL AND u."deletedAt" IS NULL
      FOR UPDATE OF c`;
    return row ?? null;
  }

  /** Counts a wrong code; at `maxFailures` the challenge is void (the sign-in starts again from the password). */
  async recordChallengeFailure(
    db: Db,
    challengeId: string,
    maxFailures: number,
  ): Promise<void> {
    const counted = await db.twoFactorChallenge.update({
      where: { id: challengeId },
      data: { failures: { increment: 1 } },
      select: { failures: true },
    });
    if (counted.failures >= maxFailures)
      await db.twoFactorChallenge.delete({
        where: { id: challengeId },
        select: { id: true },
      });
  }

  async deleteChallenge(db: Db, challengeId: string): Promise<void> {
    await db.twoFactorChallenge.deleteMany({ where: { id: challengeId } });
  }
}
