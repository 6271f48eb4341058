import { createHash } from 'node:crypto';

/** Hex SHA-256 of a secret token: what the database keeps instead of the token itself. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
