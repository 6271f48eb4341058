import { Injectable } from '@nestjs/common';
import { configuredAdminAudit } from '../../users/users.repository';
import { Prisma } from '../../infra/prisma/generated/client';
import { Db, PrismaService } from '../../infra/prisma/prisma.service';
import { OAuthProviderName } from './oauth-providers';

const account = {
  id: true,
  disabledAt: true,
  passwordHash: true,
  totpEnabledAt: true,
  emailVerifiedAt: true,
} as const;
export type OAuthAccount = Prisma.UserGetPayload<{ select: typeof account }>;

@Injectable()
export class IdentitiesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async findUserByIdentity(
    provider: OAuthProviderName,
    providerUserId: string,
  ): Promise<OAuthAccount | null> {
    const identity = await this.prisma.oAuthIdentity.findUnique({
      where: { provider_providerUserId: { provider, providerUserId } },
      select: { user: { select: account } },
    });
    return identity?.user ?? null;
  }

  /**
   * Marks a sign-in state as used, in one statement that also purges uses whose state has expired.
   * False when it was used before (a replayed callback).
   */
  async consumeState(stateHash: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.prisma.$queryRaw<{ used: number }[]>`
      WITH purge AS (DELETE FROM "OAuthStateUse" WHERE "expiresAt" < now())
      INSERT INTO "OAuthStateUse" ("stateHash", "expiresAt") VALUES (${stateHash}, ${expiresAt})
      ON CONFLICT ("stateHash") DO NOTHING
      RETURNING 1 AS used`;
    return rows.length === 1;
  }

  findUserByEmail(email: string): Promise<OAuthAccount | null> {
    return this.prisma.user.findUnique({ where: { email }, select: account });
  }

  /**
   * Links the identity to an existing account. Idempotent under races: when the identity was linked
   * meanwhile (unique provider + id), the account it points to is answered. With `takeOver`, in the same
   * transaction, everything the registrant set up is voided (see OAuthService): password, sessions, reset
   * tokens, two-factor sign-in (secret, recovery codes, pending sign-ins). `then` runs last, in the same
   * transaction: the email marked verified (and ADMIN_EMAILS applied) only with the squatter gone.
   */
  async linkIdentity(
    userId: string,
    identity: {
      provider: OAuthProviderName;
      providerUserId: string;
      email: string;
    },
    takeOver: boolean,
    then: (db: Db) => Promise<void>,
  ): Promise<OAuthAccount | null> {
    await this.prisma.$transaction(async (db) => {
      const linked = await db.oAuthIdentity.createMany({
        data: [{ userId, ...identity }],
        skipDuplicates: true,
      });
      if (takeOver && linked.count > 0) {
        await db.user.update({
          where: { id: userId },
          data: {
            passwordHash: null,
            totpSecret: null,
            totpEnabledAt: null,
            totpLastStep: null,
          },
          select: { id: true },
        });
        await db.session.deleteMany({ where: { userId } });
        await db.passwordResetToken.updateMany({
          where: { userId, usedAt: null },
          data: { usedAt: new Date() },
        });
        await db.recoveryCode.deleteMany({ where: { userId } });
        await db.twoFactorChallenge.deleteMany({ where: { userId } });
      }
      await then(db);
    });
    return this.findUserByIdentity(identity.provider, identity.providerUserId);
  }

  /** A new password-less account with its identity, in one transaction; null if the email was taken meanwhile. */
  async createUserWithIdentity(
    email: string,
    provider: OAuthProviderName,
    providerUserId: string,
    role: 'admin' | 'user',
  ): Promise<OAuthAccount | null> {
    try {
      return await this.prisma.$transaction(async (db) => {
        const created = await db.user.create({
          data: {
            email,
            role,
            emailVerifiedAt: new Date(),
            identities: { create: { provider, providerUserId, email } },
          },
          select: account,
        });
        if (role === 'admin')
          await db.auditLog.create({
            data: configuredAdminAudit(created.id),
            select: { id: true },
          });
        return created;
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
}
