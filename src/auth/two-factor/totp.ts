import { generateSecret } from '@otplib/core';
import { NodeCryptoPlugin } from '@otplib/plugin-crypto-node';
import { verify } from '@otplib/totp';
import { generateTOTP } from '@otplib/uri';
import { base32 } from './base32';

/** RFC 6238 with the authenticator apps' parameters: SHA-1, 6 digits, 30-second steps (otplib's defaults). */
const STEP_SECONDS = 30;
/** A code of the previous or next step is accepted too: phone clocks drift and people type slowly. */
const TOLERANCE_SECONDS = STEP_SECONDS;
const CODE_SHAPE = /^\d{6}$/;
/** Node's own crypto (HMAC, random bytes) for otplib. */
const crypto = new NodeCryptoPlugin();

/** A new base32 secret (160 bits, as RFC 4226 recommends). */
export function newTotpSecret(): string {
  return generateSecret({ crypto, base32, length: 20 });
}

/** The otpauth:// URI an authenticator app reads (as a QR code or pasted). */
export function totpUri(
  issuer: string,
  accountName: string,
  secret: string,
): string {
  return generateTOTP({ issuer, label: accountName, secret });
}

/**
 * The time step of a valid code, or null. A code of step `afterStep` or earlier is refused: each code
 * opens at most one door (RFC 6238 section 5.2).
 */
export async function verifyTotp(
  secret: string,
  code: string,
  afterStep: number | null,
  nowMs: number,
): Promise<number | null> {
  const token = code.replace(/\s+/g, '');
  if (!CODE_SHAPE.test(token)) return null;
  const result = await verify({
    secret,
    token,
    crypto,
    base32,
    epoch: Math.floor(nowMs / 1000),
    epochTolerance: TOLERANCE_SECONDS,
    ...(afterStep !== null ? { afterTimeStep: afterStep } : {}),
  });
  return result.valid ? result.timeStep : null;
}
