/**
 * The one form of an email address the service stores and compares: trimmed, Unicode NFC (so composed
 * and decomposed "ä" are one address), lower-case. Used by the DTOs and by the per-email rate limits.
 */
export function normalizeEmail(value: string): string {
  return value.trim().normalize('NFC').toLowerCase();
}
