import * as crypto from 'node:crypto';
import { createHash, randomBytes } from 'node:crypto';

type OneShotHash = (algorithm: string, data: string, encoding: 'hex') => string;

/** crypto.hash (Node 20.12+, 21.7+): one call, no Hash object; every request with a session hashes its cookie. */
const oneShot = (crypto as { hash?: OneShotHash }).hash;

/** Hex SHA-256 of a secret token: what the database keeps instead of the token itself. */
export const sha256Hex: (text: string) => string = oneShot
  ? (text) => oneShot('sha256', text, 'hex')
  : (text) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * A new opaque secret token (256 random bits, base64url: 43 characters) and the SHA-256 the database keeps
 * of it: sessions, reset and verification links, pending two-factor sign-ins.
 */
export function newSecretToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: sha256Hex(token) };
}
