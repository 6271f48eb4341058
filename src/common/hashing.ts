import { createHash, randomBytes } from 'node:crypto';

/** Hex SHA-256 of a secret token: what the database keeps instead of the token itself. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * A new opaque secret token (256 random bits, base64url: 43 characters) and the SHA-256 the database keeps
 * of it: sessions, reset and verification links, pending two-factor sign-ins.
 */
export function newSecretToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: sha256Hex(token) };
}
