import { randomBytes } from 'node:crypto';

const SHARE_ID = /^[A-Za-z0-9_-]{24}$/;

/** 144 random bits in 24 base64url characters: a link nobody can guess (the table's CHECK holds the format). */
export function newShareId(): string {
  return randomBytes(18).toString('base64url');
}

/** Anything else is answered as an unknown link (404) without a database read. */
export function isShareId(value: string): boolean {
  return SHARE_ID.test(value);
}
