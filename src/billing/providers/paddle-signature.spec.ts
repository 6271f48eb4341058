import { createHmac } from 'node:crypto';
import { verifyPaddleSignature } from './paddle-signature';

const secret = 'pdl_ntfset_test_secret';
const body = Buffer.from(
  '{"event_id":"evt_1","event_type":"subscription.updated"}',
);
// The SDK checks the age of a signature by the machine's clock (Date), so the tests freeze that clock at
// `now`: a slow machine between signing and checking must not move a signature out of the window.
const now = new Date('2026-11-23T12:00:00.400Z');
const ts = Math.floor(now.getTime() / 1000);
const everyTimerButDate = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;
beforeAll(() => jest.useFakeTimers({ now, doNotFake: [...everyTimerButDate] }));
afterAll(() => jest.useRealTimers());
const sign = (key: string, timestamp = ts, payload = body) =>
  createHmac('sha256', key)
    .update(`${timestamp}:${payload.toString('utf8')}`)
    .digest('hex');

describe('verifyPaddleSignature', () => {
  it('accepts a valid signature', async () => {
    expect(
      await verifyPaddleSignature(
        body,
        `ts=${ts};h1=${sign(secret)}`,
        secret,
        now,
      ),
    ).toBeNull();
  });

  it('accepts any matching h1 while secrets rotate, in any position', async () => {
    expect(
      await verifyPaddleSignature(
        body,
        `ts=${ts};h1=${sign(secret)};h1=${sign('old-secret')}`,
        secret,
        now,
      ),
    ).toBeNull();
    expect(
      await verifyPaddleSignature(
        body,
        `ts=${ts};h1=${sign('new-secret')};h1=${sign(secret)}`,
        secret,
        now,
      ),
    ).toBeNull();
  });

  it('refuses a missing header', async () => {
    expect(await verifyPaddleSignature(body, undefined, secret, now)).toBe(
      'missing',
    );
    expect(await verifyPaddleSignature(body, '  ', secret, now)).toBe(
      'missing',
    );
  });

  it('refuses malformed headers', async () => {
    for (const header of [
      `h1=${sign(secret)}`,
      `ts=${ts}`,
      `ts=abc;h1=${sign(secret)}`,
      `ts=${ts};h1=zz`,
      `ts=${ts};ts=${ts};h1=${sign(secret)}`,
      'garbage',
    ]) {
      expect(await verifyPaddleSignature(body, header, secret, now)).toBe(
        'malformed',
      );
    }
  });

  it('refuses a signature made with another secret or over another body', async () => {
    expect(
      await verifyPaddleSignature(
        body,
        `ts=${ts};h1=${sign('other')}`,
        secret,
        now,
      ),
    ).toBe('mismatch');
    expect(
      await verifyPaddleSignature(
        Buffer.from(`${body.toString()} `),
        `ts=${ts};h1=${sign(secret)}`,
        secret,
        now,
      ),
    ).toBe('mismatch');
  });

  it('refuses a signature whose timestamp was changed', async () => {
    expect(
      await verifyPaddleSignature(
        body,
        `ts=${ts + 1};h1=${sign(secret)}`,
        secret,
        now,
      ),
    ).toBe('mismatch');
  });

  it('refuses a valid signature older or newer than 5 seconds', async () => {
    // Within the window by both clocks (the SDK counts from the whole second, so exactly 5 s is its edge).
    expect(
      await verifyPaddleSignature(
        body,
        `ts=${ts - 4};h1=${sign(secret, ts - 4)}`,
        secret,
        now,
      ),
    ).toBeNull();
    expect(
      await verifyPaddleSignature(
        body,
        `ts=${ts - 6};h1=${sign(secret, ts - 6)}`,
        secret,
        now,
      ),
    ).toBe('stale');
    expect(
      await verifyPaddleSignature(
        body,
        `ts=${ts + 6};h1=${sign(secret, ts + 6)}`,
        secret,
        now,
      ),
    ).toBe('stale');
  });
});
