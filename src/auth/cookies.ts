import { CookieOptions, Response } from 'express';
import { AppConfig } from '../config/app-config';

/** A well-formed session token: 32 random bytes, base64url. Anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The session token of the Cookie header, or null. Every cookie of that name is considered: a junk `sid`
 * planted by a sibling subdomain in front of the real one must not sign the user out.
 */
export function readCookie(
  header: string | undefined,
  name: string,
): string | null {
  return (
    cookieValues(header, name).find((value) => TOKEN_SHAPE.test(value)) ?? null
  );
}

export function readRawCookie(
  header: string | undefined,
  name: string,
): string | undefined {
  return cookieValues(header, name)[0];
}

function cookieValues(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  for (const part of (header ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator !== -1 && part.slice(0, separator).trim() === name)
      values.push(part.slice(separator + 1).trim());
  }
  return values;
}

/** httpOnly, SameSite=Lax, Path=/, Secure when the app is served over https. */
export function sessionCookieOptions(
  config: AppConfig,
  expires?: Date,
): CookieOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: config.session.secureCookie,
    ...(expires ? { expires } : {}),
  };
}

/** The cookie of a sign-in waiting for its second factor (see TwoFactorService): short-lived, httpOnly. */
export function pendingSignInCookieName(config: AppConfig): string {
  return `${config.session.cookieName}_2fa`;
}

export function setSessionCookie(
  res: Response,
  config: AppConfig,
  session: { token: string; expiresAt: Date },
): void {
  res.cookie(
    config.session.cookieName,
    session.token,
    sessionCookieOptions(config, session.expiresAt),
  );
}

export function clearPendingSignInCookie(
  res: Response,
  config: AppConfig,
): void {
  res.clearCookie(
    pendingSignInCookieName(config),
    sessionCookieOptions(config),
  );
}

export function setPendingSignInCookie(
  res: Response,
  config: AppConfig,
  pending: { token: string; expiresAt: Date },
): void {
  res.cookie(
    pendingSignInCookieName(config),
    pending.token,
    sessionCookieOptions(config, pending.expiresAt),
  );
}
