/** Why a callback failed; sent to the web app as `?error=<code>`. No session is created. */
export class OAuthFailure extends Error {
  constructor(
    readonly code:
      | 'oauth_state_invalid'
      | 'oauth_denied'
      | 'oauth_exchange_failed'
      | 'oauth_email_unverified'
      | 'account_disabled',
  ) {
    super(code);
  }
}

/**
 * A failure of this service (database, cache) during a sign-in, carried through passport: it is answered
 * as the error it wraps (a 503 for a database outage), not as the provider's failure.
 */
export class InternalSignInError extends Error {
  constructor(override readonly cause: unknown) {
    super('sign-in interrupted by an internal failure');
  }
}
