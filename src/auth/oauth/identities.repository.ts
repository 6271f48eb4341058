import { Injectable } from '@nestjs/common';
import { Prisma } from '../../infra/prisma/generated/client';
import { PrismaService } from '../../infra/prisma/prisma.service';
import { OAuthProviderName } from './oauth-providers';

const account = { id: true, disabledAt: true } as const;
export type OAuthAccount = Prisma.UserGetPayload<{ select: typeof account }>;

@Injectable()
export class IdentitiesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async findUserByIdentity(provider: OAuthProviderName, providerUserId: string): Promise<OAuthAccount | null> {
    const identity = await this.prisma.oAuthIdentity.findUnique({
      where: { provider_providerUserId: { provider, providerUserId } },
      select: { user: { select: account } },
    });
    return identity?.user ?? null;
  }

  findUserByEmail(email: string): Promise<OAuthAccount | null> {
    return this.prisma.user.findUnique({ where: { email }, select: account });
  }

  /**
   * Links the identity to an existing account. Idempotent under races: when the identity was linked
   * meanwhile (unique provider + id), the account it points to is answered.
   */
  async linkIdentity(userId: string, provider: OAuthProviderName, providerUserId: string, email: string): Promise<OAuthAccount | null> {
    await this.prisma.oAuthIdentity.createMany({ data: [{ userId, provider, providerUserId, email }], skipDuplicates: true });
    return this.findUserByIdentity(provider, providerUserId);
  }

  /** A new password-less account with its identity, in one transaction; null if the email was taken meanwhile. */
  async createUserWithIdentity(email: string, provider: OAuthProviderName, providerUserId: string): Promise<OAuthAccount | null> {
    try {
      return await this.prisma.user.create({ data: { email, identities: { create: { provider, providerUserId, email } } }, select: account });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') return null;
      throw error;
    }
  }
}
