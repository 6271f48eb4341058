import { randomUUID } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids of stored rows are UUIDs; anything else is answered like an unknown id (404), never a 500. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Rows inserted by raw SQL
 * get the same kind of id Prisma gives the others (`@default(uuid(7))`), so new rows land at the end of
 * their indexes and ids sort by creation time.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  // randomUUID() draws from a cached entropy pool: its random digits (after the version digit, and the
  // variant with what follows) fill rand_a and rand_b.
  const random = randomUUID();
  const time = nowMs.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19)}`;
}
