import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What the browser carries between the redirect and the callback (in a signed, httpOnly cookie). */
export interface OAuthState {
  state: string;
  /** The PKCE verifier passport made for this authorization (providers with PKCE). */
  codeVerifier?: string;
  expiresAt: number;
}

export const OAUTH_STATE_TTL_MS = 10 * 60_000;

export function newOAuthState(
  codeVerifier: string | undefined,
  now = Date.now(),
): OAuthState {
  return {
    state: randomBytes(32).toString('base64url'),
    ...(codeVerifier ? { codeVerifier } : {}),
    expiresAt: now + OAUTH_STATE_TTL_MS,
  };
}

export function sealOAuthState(
  value: OAuthState,
  secret: string,
  provider: string,
): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${sign(payload, secret, provider)}`;
}

/** The state from a cookie, or null when it is missing, tampered with, for another provider or expired. */
export function openOAuthState(
  cookie: string | undefined,
  secret: string,
  provider: string,
  now = Date.now(),
): OAuthState | null {
  if (!cookie) return null;
  const [payload, signature, ...rest] = cookie.split('.');
  if (
    !payload ||
    !signature ||
    rest.length > 0 ||
    !sameText(signature, sign(payload, secret, provider))
  )
    return null;
  try {
    const value = JSON.parse(
      Buffer.from(payload, 'base64url').toString('utf8'),
    ) as OAuthState;
    const verifierOk =
      value.codeVerifier === undefined ||
      typeof value.codeVerifier === 'string';
    return typeof value.state === 'string' &&
      verifierOk &&
      typeof value.expiresAt === 'number' &&
      value.expiresAt > now
      ? value
      : null;
  } catch {
    return null;
  }
}

export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function sign(payload: string, secret: string, provider: string): string {
  return createHmac('sha256', secret)
    .update(`oauth:${provider}:${payload}`)
    .digest('base64url');
}
