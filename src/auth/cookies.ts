import { CookieOptions } from 'express';
import { AppConfig } from '../config/app-config';

/** A well-formed session token: 32 random bytes, base64url. Anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The session token of the Cookie header, or null when absent or not shaped like a token. */
export function readCookie(header: string | undefined, name: string): string | null {
  const value = readRawCookie(header, name);
  return value !== undefined && TOKEN_SHAPE.test(value) ? value : null;
}

export function readRawCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator !== -1 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}

/** httpOnly, SameSite=Lax, Path=/, Secure when the app is served over https. */
export function sessionCookieOptions(config: AppConfig, expires?: Date): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', path: '/', secure: config.session.secureCookie, ...(expires ? { expires } : {}) };
}
