import { createHmac, randomBytes } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
/** 32 symbols (5 bits each, so `byte & 31` is unbiased) without the look-alikes 0/o and 1/l. */
const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
const CODE_LENGTH = 10;

/** Ten codes like `k7m2p-x9q4r` (50 bits each), shown once. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(CODE_LENGTH);
    const symbols = Array.from(bytes, (byte) => ALPHABET[byte & 31]).join('');
    return `${symbols.slice(0, 5)}-${symbols.slice(5)}`;
  });
}

/** What is compared: case, spaces and dashes do not matter. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]+/g, '');
}

/**
 * Only an HMAC (keyed by the password pepper, bound to the account) is stored: a leaked table neither
 * gives the codes nor lets one account's code be tried on another.
 */
export function hashRecoveryCode(
  pepper: string,
  userId: string,
  code: string,
): string {
  return createHmac('sha256', pepper)
    .update(`${userId}:${normalizeRecoveryCode(code)}`)
    .digest('hex');
}
