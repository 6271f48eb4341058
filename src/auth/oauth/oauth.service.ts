import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { sha256Hex } from '../../common/hashing';
import { AppError } from '../../common/errors/app-error';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { ClientInfo } from '../auth.service';
import { SessionsService } from '../sessions.service';
import { IdentitiesRepository, OAuthAccount } from './identities.repository';
import { oauthProvider, OAuthProviderDefinition, OAuthProviderName, ProviderProfile } from './oauth-providers';
import { newOAuthState, OAuthState, openOAuthState, sameText, sealOAuthState } from './oauth-state';
import { initialRole } from '../../users/initial-role';

/** Why a callback failed; sent to the web app as `?error=<code>`. No session is created. */
export class OAuthFailure extends Error {
  constructor(readonly code: 'oauth_state_invalid' | 'oauth_denied' | 'oauth_exchange_failed' | 'oauth_email_unverified' | 'account_disabled') {
    super(code);
  }
}

export interface CallbackQuery {
  code?: string;
  state?: string;
  error?: string;
}

@Injectable()
export class OAuthService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly identities: IdentitiesRepository,
    private readonly sessions: SessionsService,
    private readonly log: AppLogger,
  ) {}

  /** The provider's authorization URL and the sealed state the browser must bring back. */
  start(name: OAuthProviderName): { url: string; sealedState: string } {
    const provider = this.configured(name);
    const state = newOAuthState();
    const url = new URL(provider.config.authorizationUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', provider.config.clientId!);
    url.searchParams.set('redirect_uri', this.callbackUrl(name));
    url.searchParams.set('scope', provider.scope);
    url.searchParams.set('state', state.state);
    if (provider.pkce) {
      url.searchParams.set('code_challenge', createHash('sha256').update(state.codeVerifier).digest('base64url'));
      url.searchParams.set('code_challenge_method', 'S256');
    }
    return { url: url.toString(), sealedState: sealOAuthState(state, this.config.secrets.session, name) };
  }

  /** Checks the state, exchanges the code, finds or creates the account and starts a session. */
  async finish(name: OAuthProviderName, query: CallbackQuery, sealedState: string | undefined, client: ClientInfo) {
    const provider = this.configured(name);
    const state = openOAuthState(sealedState, this.config.secrets.session, name);
    if (!state || typeof query.state !== 'string' || !sameText(query.state, state.state)) throw new OAuthFailure('oauth_state_invalid');
    // Single use: a callback replayed with the same cookie and state (another code) starts nothing.
    const fresh = await this.identities.consumeState(sha256Hex(state.state), new Date(state.expiresAt));
    if (!fresh) throw new OAuthFailure('oauth_state_invalid');
    if (query.error || typeof query.code !== 'string' || !query.code) throw new OAuthFailure('oauth_denied');
    const profile = await this.profileFor(provider, query.code, state);
    const account = await this.accountFor(name, profile);
    if (account.disabledAt) throw new OAuthFailure('account_disabled');
    return this.sessions.start(account.id, client);
  }

  callbackUrl(name: OAuthProviderName): string {
    return `${this.config.apiUrl}/v1/auth/${name}/callback`;
  }

  private configured(name: OAuthProviderName): OAuthProviderDefinition {
    const provider = oauthProvider(this.config, name);
    if (!provider.config.clientId || !provider.config.clientSecret) {
      throw new AppError('provider_not_configured', `Sign-in with ${name} is not configured on this server.`);
    }
    return provider;
  }

  private async profileFor(provider: OAuthProviderDefinition, code: string, state: OAuthState): Promise<ProviderProfile> {
    try {
      const accessToken = await this.exchangeCode(provider, code, state);
      return await provider.fetchProfile(accessToken);
    } catch (error) {
      this.log.warn({ provider: provider.name, err: error }, 'oauth code exchange failed');
      throw new OAuthFailure('oauth_exchange_failed');
    }
  }

  private async exchangeCode(provider: OAuthProviderDefinition, code: string, state: OAuthState): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.callbackUrl(provider.name),
      client_id: provider.config.clientId!,
      client_secret: provider.config.clientSecret!,
      ...(provider.pkce ? { code_verifier: state.codeVerifier } : {}),
    });
    const res = await fetch(provider.config.tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: form,
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: unknown; error?: unknown };
    if (!res.ok || typeof body.access_token !== 'string') throw new Error(`token endpoint answered ${res.status} ${String(body.error ?? '')}`);
    return body.access_token;
  }

  /**
   * The account of this identity; else, for a provider-verified email, the account with that email (linked
   * now) or a new one. An unverified email never links to, nor creates, an account with that address.
   *
   * Registration does not prove that the registrant owns the email, so anyone could have registered the
   * address first. When a provider proves ownership and links to an account that has a password, that
   * password, every session and every reset link are voided: the verified owner takes the account over,
   * and a squatter loses it. (The owner can set a password again through forgot-password.)
   */
  private async accountFor(name: OAuthProviderName, profile: ProviderProfile): Promise<OAuthAccount> {
    const known = await this.identities.findUserByIdentity(name, profile.providerUserId);
    if (known) return known;
    if (!profile.email || !profile.emailVerified) throw new OAuthFailure('oauth_email_unverified');
    const identity = { provider: name, providerUserId: profile.providerUserId, email: profile.email };
    const existing = await this.identities.findUserByEmail(profile.email);
    if (existing?.disabledAt) throw new OAuthFailure('account_disabled');
    const account = existing
      ? await this.identities.linkIdentity(existing.id, identity, existing.passwordHash !== null)
      : ((await this.identities.createUserWithIdentity(profile.email, name, profile.providerUserId, initialRole(this.config, profile.email))) ??
        (await this.identities.findUserByEmail(profile.email)));
    if (!account) throw new OAuthFailure('oauth_exchange_failed');
    return account;
  }
}
