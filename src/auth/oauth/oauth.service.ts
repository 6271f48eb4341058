import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { initialRole } from '../../users/initial-role';
import { UsersRepository } from '../../users/users.repository';
import { ClientInfo } from '../auth.service';
import { SessionsService } from '../sessions.service';
import {
  PendingSignIn,
  TwoFactorService,
} from '../two-factor/two-factor.service';
import { IdentitiesRepository, OAuthAccount } from './identities.repository';
import { InternalSignInError, OAuthFailure } from './oauth-failure';
import { OAuthProviderName, ProviderProfile } from './oauth-providers';

// docs/adr/0021-oauth-sign-in.md
/** What a provider's sign-in leads to: the account, once passport has checked the state and the code. */
@Injectable()
export class OAuthService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly identities: IdentitiesRepository,
    private readonly sessions: SessionsService,
    private readonly users: UsersRepository,
    private readonly twoFactor: TwoFactorService,
  ) {}

  /**
   * The account a provider's profile signs in to (the strategies' `validate`). Throws OAuthFailure for
   * what the user is told; any other failure is carried as InternalSignInError, so it is not mistaken
   * for the provider's.
   */
  async signInAccount(
    name: OAuthProviderName,
    profile: ProviderProfile,
  ): Promise<OAuthAccount> {
    try {
      const account = await this.accountFor(name, profile);
      if (account.disabledAt) throw new OAuthFailure('account_disabled');
      return account;
    } catch (error) {
      throw error instanceof OAuthFailure
        ? error
        : new InternalSignInError(error);
    }
  }

  /** A session, or, for an account with 2FA on, a sign-in waiting for its second factor. */
  async startSession(
    account: OAuthAccount,
    client: ClientInfo,
  ): Promise<
    { session: { token: string; expiresAt: Date } } | { pending: PendingSignIn }
  > {
    if (account.totpEnabledAt)
      return { pending: await this.twoFactor.beginSignIn(account.id) };
    return { session: await this.sessions.start(account.id, client) };
  }

  /**
   * The account of this identity; else, for a provider-verified email, the account with that email (linked
   * now) or a new one. An unverified email never links to, nor creates, an account with that address.
   *
   * Registration does not prove that the registrant owns the email, so anyone could have registered the
   * address first. When a provider proves ownership and links to an account whose address was never
   * verified, whatever the registrant set up is voided (password, sessions, reset links, two-factor
   * sign-in): the verified owner takes the account over, and a squatter loses it, before ADMIN_EMAILS can
   * make it an admin. (The owner can set a password again through forgot-password.) An account whose
   * address was already verified belongs to the mailbox's owner: the identity is simply linked.
   */
  private async accountFor(
    name: OAuthProviderName,
    profile: ProviderProfile,
  ): Promise<OAuthAccount> {
    const known = await this.identities.findUserByIdentity(
      name,
      profile.providerUserId,
    );
    if (known) return known;
    if (!profile.email || !profile.emailVerified)
      throw new OAuthFailure('oauth_email_unverified');
    const identity = {
      provider: name,
      providerUserId: profile.providerUserId,
      email: profile.email,
    };
    const existing = await this.identities.findUserByEmail(profile.email);
    if (existing?.disabledAt) throw new OAuthFailure('account_disabled');
    const account = existing
      ? await this.identities.linkIdentity(
          existing.id,
          identity,
          existing.emailVerifiedAt === null,
          (db) =>
            this.users.markEmailVerified(
              existing.id,
              this.config.adminEmails,
              new Date(),
              db,
            ),
        )
      : ((await this.identities.createUserWithIdentity(
          profile.email,
          name,
          profile.providerUserId,
          initialRole(this.config, profile.email, true),
        )) ?? (await this.identities.findUserByEmail(profile.email)));
    if (!account) throw new OAuthFailure('oauth_exchange_failed');
    return account;
  }
}
