import { createHmac, timingSafeEqual } from 'node:crypto';
import { isStale, SignatureProblem } from './webhook-signature';

/** Paddle's SDK refuses signatures older than 5 s; we keep its window and refuse the future alike. */
export const PADDLE_SIGNATURE_TOLERANCE_SECONDS = 5;

const TIMESTAMP = /^\d{1,12}$/;
const HMAC_SHA256_HEX = /^[0-9a-f]{64}$/i;

/**
 * Paddle Billing's scheme: `Paddle-Signature: ts=<unix seconds>;h1=<hex HMAC-SHA256 of "<ts>:<raw body>">`.
 * While a secret is being rotated Paddle sends one h1 per secret, so any matching h1 is accepted (Paddle's
 * own SDK keeps only the last one). Answers null when the signature is valid.
 */
export function verifyPaddleSignature(rawBody: Buffer, header: string | undefined, secret: string, now: Date): SignatureProblem | null {
  if (!header?.trim()) return 'missing';
  const parsed = parseHeader(header);
  if (!parsed) return 'malformed';
  const expected = createHmac('sha256', secret).update(`${parsed.timestamp}:`).update(rawBody).digest();
  const matches = parsed.signatures.some((signature) => timingSafeEqual(Buffer.from(signature, 'hex'), expected));
  if (!matches) return 'mismatch';
  return isStale(Number(parsed.timestamp), now, PADDLE_SIGNATURE_TOLERANCE_SECONDS) ? 'stale' : null;
}

function parseHeader(header: string): { timestamp: string; signatures: string[] } | null {
  let timestamp: string | null = null;
  const signatures: string[] = [];
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0) return null;
    const key = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (key === 'ts') {
      if (timestamp !== null || !TIMESTAMP.test(value)) return null;
      timestamp = value;
    } else if (key === 'h1') {
      if (!HMAC_SHA256_HEX.test(value)) return null;
      signatures.push(value);
    }
  }
  return timestamp !== null && signatures.length > 0 ? { timestamp, signatures } : null;
}
