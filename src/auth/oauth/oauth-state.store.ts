import { CookieOptions, Request } from 'express';
import { sha256Hex } from '../../common/hashing';
import { readRawCookie } from '../cookies';
import { IdentitiesRepository } from './identities.repository';
import { OAuthProviderName } from './oauth-providers';
import { InternalSignInError, OAuthFailure } from './oauth-failure';
import {
  newOAuthState,
  OAUTH_STATE_TTL_MS,
  openOAuthState,
  sameText,
  sealOAuthState,
} from './oauth-state';

/** The state cookie of a provider: sealed with the session secret, sent only to that provider's routes. */
export function stateCookie(
  provider: OAuthProviderName,
  base: CookieOptions,
): { name: string; options: CookieOptions } {
  return {
    name: `oauth_${provider}`,
    options: { ...base, path: `/v1/auth/${provider}` },
  };
}

type Stored = (err: Error | null, state?: string) => void;
type Verified = (
  err: Error | null,
  ok: string | boolean,
  info?: OAuthFailure,
) => void;

/**
 * passport-oauth2's state store in its PKCE form (`store` takes five arguments, so passport hands it the
 * verifier). The state and the verifier travel in a sealed, httpOnly cookie: a callback is accepted only
 * from the browser that started the sign-in, and only once (the state's hash is consumed in the database,
 * so a replay on any instance fails). Answers the verifier to passport, which sends it with the code.
 */
export class SealedCookieStateStore {
  private readonly cookie: { name: string; options: CookieOptions };

  constructor(
    private readonly provider: OAuthProviderName,
    private readonly secret: string,
    cookieOptions: CookieOptions,
    private readonly identities: IdentitiesRepository,
  ) {
    this.cookie = stateCookie(provider, cookieOptions);
  }

  store(
    req: Request,
    verifier: string | undefined,
    _appState: unknown,
    _meta: unknown,
    done: Stored,
  ): void {
    const state = newOAuthState(verifier);
    req.res!.cookie(
      this.cookie.name,
      sealOAuthState(state, this.secret, this.provider),
      { ...this.cookie.options, maxAge: OAUTH_STATE_TTL_MS },
    );
    done(null, state.state);
  }

  verify(req: Request, provided: unknown, done: Verified): void {
    const state = openOAuthState(
      readRawCookie(req.headers.cookie, this.cookie.name),
      this.secret,
      this.provider,
    );
    const invalid = new OAuthFailure('oauth_state_invalid');
    if (
      !state ||
      typeof provided !== 'string' ||
      !sameText(provided, state.state)
    )
      return done(null, false, invalid);
    this.identities
      .consumeState(sha256Hex(state.state), new Date(state.expiresAt))
      .then(
        (fresh) =>
          fresh
            ? done(null, state.codeVerifier ?? true)
            : done(null, false, invalid),
        (error: unknown) => done(new InternalSignInError(error), false),
      );
  }
}
