import { sha256Hex } from '../common/hashing';

/**
 * JSON with object keys sorted at every level, so two requests that differ only in key order have the same
 * fingerprint.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What identifies a request under its idempotency key: same key with another fingerprint is a 422. */
export function fingerprintOf(request: unknown): string {
  return sha256Hex(canonicalJson(request));
}
