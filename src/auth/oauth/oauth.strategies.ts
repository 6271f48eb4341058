import { Provider } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy as GithubOAuthStrategy } from 'passport-github2';
import { Strategy as GoogleOAuthStrategy } from 'passport-google-oauth20';
import { StateStore } from 'passport-oauth2';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { sessionCookieOptions } from '../cookies';
import { IdentitiesRepository, OAuthAccount } from './identities.repository';
import { boundOAuthClient } from './oauth-http';
import {
  githubProfile,
  googleProfile,
  isConfigured,
  OAuthProviderName,
  PassportProfile,
} from './oauth-providers';
import { SealedCookieStateStore } from './oauth-state.store';
import { OAuthService } from './oauth.service';

export function callbackUrl(
  config: AppConfig,
  provider: OAuthProviderName,
): string {
  return `${config.apiUrl}/v1/auth/${provider}/callback`;
}

/** passport-oauth2 picks the PKCE form of a store by the arity of `store`, which its types do not describe. */
function stateStore(
  provider: OAuthProviderName,
  config: AppConfig,
  identities: IdentitiesRepository,
): StateStore {
  return new SealedCookieStateStore(
    provider,
    config.secrets.session,
    sessionCookieOptions(config),
    identities,
  ) as unknown as StateStore;
}

/** What both strategies are given: credentials and endpoints from the config, our callback and state store. */
function commonOptions(
  config: AppConfig,
  provider: OAuthProviderName,
  identities: IdentitiesRepository,
) {
  const endpoints = config.oauth[provider];
  return {
    clientID: endpoints.clientId ?? '',
    clientSecret: endpoints.clientSecret ?? '',
    callbackURL: callbackUrl(config, provider),
    authorizationURL: endpoints.authorizationUrl,
    tokenURL: endpoints.tokenUrl,
    userProfileURL: endpoints.userinfoUrl,
    store: stateStore(provider, config, identities),
  };
}

/** passport-google-oauth20 with PKCE S256, no passport session; the profile comes from OIDC userinfo. */
export class GoogleStrategy extends PassportStrategy(
  GoogleOAuthStrategy,
  'google',
) {
  constructor(
    config: AppConfig,
    identities: IdentitiesRepository,
    private readonly oauth: OAuthService,
  ) {
    super({
      ...commonOptions(config, 'google', identities),
      scope: ['openid', 'email', 'profile'],
      pkce: true,
    });
    boundOAuthClient(this._oauth2, config.oauth.timeoutMs);
  }

  validate(
    _accessToken: string,
    _refreshToken: string | undefined,
    profile: PassportProfile,
  ): Promise<OAuthAccount> {
    return this.oauth.signInAccount('google', googleProfile(profile));
  }
}

/** passport-github2, no passport session; `allRawEmails` keeps GitHub's verified flags on the emails. */
export class GithubStrategy extends PassportStrategy(
  GithubOAuthStrategy,
  'github',
) {
  constructor(
    config: AppConfig,
    identities: IdentitiesRepository,
    private readonly oauth: OAuthService,
  ) {
    const emailsUrl = config.oauth.github.emailsUrl;
    super({
      ...commonOptions(config, 'github', identities),
      userEmailURL: emailsUrl,
      allRawEmails: true,
      scope: ['read:user', 'user:email'],
    });
    boundOAuthClient(this._oauth2, config.oauth.timeoutMs, [emailsUrl]);
  }

  validate(
    _accessToken: string,
    _refreshToken: string | undefined,
    profile: PassportProfile,
  ): Promise<OAuthAccount> {
    return this.oauth.signInAccount('github', githubProfile(profile));
  }
}

/**
 * The strategies of the configured providers (passport-oauth2 cannot be built without client
 * credentials); an unconfigured provider answers 503 from its guard before passport is consulted.
 */
export const oauthStrategies: Provider[] = [
  {
    provide: GoogleStrategy,
    inject: [APP_CONFIG, IdentitiesRepository, OAuthService],
    useFactory: (
      config: AppConfig,
      identities: IdentitiesRepository,
      oauth: OAuthService,
    ) =>
      isConfigured(config.oauth.google)
        ? new GoogleStrategy(config, identities, oauth)
        : null,
  },
  {
    provide: GithubStrategy,
    inject: [APP_CONFIG, IdentitiesRepository, OAuthService],
    useFactory: (
      config: AppConfig,
      identities: IdentitiesRepository,
      oauth: OAuthService,
    ) =>
      isConfigured(config.oauth.github)
        ? new GithubStrategy(config, identities, oauth)
        : null,
  },
];
