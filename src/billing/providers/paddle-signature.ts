import { NodeRuntime, Webhooks } from '@paddle/paddle-node-sdk';
import { isStale, SignatureProblem } from './webhook-signature';

/** Paddle's SDK refuses signatures older than 5 s; we keep its window and refuse the future alike. */
export const PADDLE_SIGNATURE_TOLERANCE_SECONDS = 5;

const TIMESTAMP = /^\d{1,12}$/;
const HMAC_SHA256_HEX = /^[0-9a-f]{64}$/i;

// The SDK's HMAC runs on the runtime it was told about (a Paddle client does this in its constructor).
NodeRuntime.initialize();
const webhooks = new Webhooks();

/**
 * Paddle Billing's scheme: `Paddle-Signature: ts=<unix seconds>;h1=<hex HMAC-SHA256 of "<ts>:<raw body>">`.
 * The SDK checks the HMAC (`Webhooks.isSignatureValid`). It reads one h1 only, the last, while Paddle
 * sends one h1 per secret during a secret rotation, so each h1 goes to the SDK on its own and any match is
 * accepted. Missing and malformed headers are told apart here, and the time window is checked with the
 * service's clock in both directions (the SDK checks only the past, by the machine's clock). Answers null
 * when the signature is valid.
 */
export async function verifyPaddleSignature(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
  now: Date,
): Promise<SignatureProblem | null> {
  if (!header?.trim()) return 'missing';
  const parsed = parseHeader(header);
  if (!parsed) return 'malformed';
  if (
    isStale(Number(parsed.timestamp), now, PADDLE_SIGNATURE_TOLERANCE_SECONDS)
  )
    return 'stale';
  const body = rawBody.toString('utf8');
  for (const signature of parsed.signatures) {
    if (
      await webhooks.isSignatureValid(
        body,
        secret,
        `ts=${parsed.timestamp};h1=${signature.toLowerCase()}`,
      )
    )
      return null;
  }
  return 'mismatch';
}

function parseHeader(
  header: string,
): { timestamp: string; signatures: string[] } | null {
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
  return timestamp !== null && signatures.length > 0
    ? { timestamp, signatures }
    : null;
}
