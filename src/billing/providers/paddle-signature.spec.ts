import { createHmac } from 'node:crypto';
import { verifyPaddleSignature } from './paddle-signature';

const secret = 'pdl_ntfset_test_secret';
const body = Buffer.from('{"event_id":"evt_1","event_type":"subscription.updated"}');
const now = new Date('2026-11-22T12:00:00Z');
const ts = Math.floor(now.getTime() / 1000);
const sign = (key: string, timestamp = ts, payload = body) => createHmac('sha256', key).update(`${timestamp}:${payload.toString('utf8')}`).digest('hex');

describe('verifyPaddleSignature', () => {
  it('accepts a valid signature', () => {
    expect(verifyPaddleSignature(body, `ts=${ts};h1=${sign(secret)}`, secret, now)).toBeNull();
  });

  it('accepts any matching h1 while secrets rotate, in any position', () => {
    expect(verifyPaddleSignature(body, `ts=${ts};h1=${sign(secret)};h1=${sign('old-secret')}`, secret, now)).toBeNull();
    expect(verifyPaddleSignature(body, `ts=${ts};h1=${sign('new-secret')};h1=${sign(secret)}`, secret, now)).toBeNull();
  });

  it('refuses a missing header', () => {
    expect(verifyPaddleSignature(body, undefined, secret, now)).toBe('missing');
    expect(verifyPaddleSignature(body, '  ', secret, now)).toBe('missing');
  });

  it('refuses malformed headers', () => {
    for (const header of [`h1=${sign(secret)}`, `ts=${ts}`, `ts=abc;h1=${sign(secret)}`, `ts=${ts};h1=zz`, `ts=${ts};ts=${ts};h1=${sign(secret)}`, 'garbage']) {
      expect(verifyPaddleSignature(body, header, secret, now)).toBe('malformed');
    }
  });

  it('refuses a signature made with another secret or over another body', () => {
    expect(verifyPaddleSignature(body, `ts=${ts};h1=${sign('other')}`, secret, now)).toBe('mismatch');
    expect(verifyPaddleSignature(Buffer.from(`${body.toString()} `), `ts=${ts};h1=${sign(secret)}`, secret, now)).toBe('mismatch');
  });

  it('refuses a signature whose timestamp was changed', () => {
    expect(verifyPaddleSignature(body, `ts=${ts + 1};h1=${sign(secret)}`, secret, now)).toBe('mismatch');
  });

  it('refuses a valid signature older or newer than 5 seconds', () => {
    expect(verifyPaddleSignature(body, `ts=${ts - 5};h1=${sign(secret, ts - 5)}`, secret, now)).toBeNull();
    expect(verifyPaddleSignature(body, `ts=${ts - 6};h1=${sign(secret, ts - 6)}`, secret, now)).toBe('stale');
    expect(verifyPaddleSignature(body, `ts=${ts + 6};h1=${sign(secret, ts + 6)}`, secret, now)).toBe('stale');
  });
});
