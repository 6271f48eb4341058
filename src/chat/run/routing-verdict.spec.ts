import { backoffMs, verdictOf } from './routing-verdict';

const COOLDOWN = 60_000;

describe('verdictOf', () => {
  it('rests the key for the Retry-After of a 429 (or the default) and tries another key', () => {
    expect(
      verdictOf(
        {
          failure: 'provider_error',
          providerFailure: { kind: 'http', status: 429, retryAfterMs: 30_000 },
        },
        COOLDOWN,
      ),
    ).toEqual({
      retry: true,
      coolKeyMs: 30_000,
      coolScope: 'model',
      label: 'http_429',
    });
    expect(
      verdictOf(
        {
          failure: 'provider_error',
          providerFailure: { kind: 'http', status: 429 },
        },
        COOLDOWN,
      ),
    ).toEqual({
      retry: true,
      coolKeyMs: COOLDOWN,
      coolScope: 'model',
      label: 'http_429',
    });
    // Retry-After: 0 still rests the key a moment, or it would be taken again at once.
    expect(
      verdictOf(
        {
          failure: 'provider_error',
          providerFailure: { kind: 'http', status: 429, retryAfterMs: 0 },
        },
        COOLDOWN,
      ).coolKeyMs,
    ).toBe(1_000);
  });

  it('rests a refused key (401, 403) for the default cooldown', () => {
    for (const status of [401, 403])
      expect(
        verdictOf(
          {
            failure: 'provider_error',
            providerFailure: { kind: 'http', status, retryAfterMs: 5 },
          },
          COOLDOWN,
        ),
      ).toEqual({
        retry: true,
        coolKeyMs: COOLDOWN,
        coolScope: 'key',
        label: 'http_auth',
      });
  });

  it('rests a key the upstream calls invalid whatever the status (Google: 400 API_KEY_INVALID)', () => {
    expect(
      verdictOf(
        {
          failure: 'provider_error',
          providerFailure: { kind: 'http', status: 400, keyRejected: true },
        },
        COOLDOWN,
      ),
    ).toEqual({
      retry: true,
      coolKeyMs: COOLDOWN,
      coolScope: 'key',
      label: 'http_auth',
    });
  });

  it('neither retries nor falls back after a refusal of the content filter', () => {
    expect(
      verdictOf(
        { failure: 'provider_error', providerFailure: { kind: 'refused' } },
        COOLDOWN,
      ),
    ).toEqual({ retry: false, final: true, label: 'refused' });
  });

  it('retries 5xx, 408, 409 and 425 after a pause (the Retry-After when given), without resting the key', () => {
    expect(
      verdictOf(
        {
          failure: 'provider_error',
          providerFailure: { kind: 'http', status: 503, retryAfterMs: 2_000 },
        },
        COOLDOWN,
      ),
    ).toEqual({ retry: true, waitMs: 2_000, label: 'http_5xx' });
    for (const status of [408, 409, 425])
      expect(
        verdictOf(
          {
            failure: 'provider_error',
            providerFailure: { kind: 'http', status },
          },
          COOLDOWN,
        ),
      ).toEqual({ retry: true, label: 'http_4xx' });
  });

  it('does not retry the other 4xx: the same request would fail again', () => {
    for (const status of [400, 404, 413, 422])
      expect(
        verdictOf(
          {
            failure: 'provider_error',
            providerFailure: { kind: 'http', status },
          },
          COOLDOWN,
        ),
      ).toEqual({ retry: false, label: 'http_4xx' });
  });

  it('retries a lost connection, a broken stream and a timeout; never an aborted call', () => {
    expect(
      verdictOf(
        { failure: 'provider_error', providerFailure: { kind: 'connection' } },
        COOLDOWN,
      ),
    ).toEqual({ retry: true, label: 'connection' });
    expect(
      verdictOf(
        { failure: 'provider_error', providerFailure: { kind: 'stream' } },
        COOLDOWN,
      ),
    ).toEqual({ retry: true, label: 'stream' });
    expect(
      verdictOf(
        { failure: 'provider_timeout', firstTokenTimedOut: true },
        COOLDOWN,
      ),
    ).toEqual({ retry: true, label: 'timeout' });
    expect(
      verdictOf(
        { failure: 'provider_error', providerFailure: { kind: 'aborted' } },
        COOLDOWN,
      ),
    ).toEqual({ retry: false, label: 'stream' });
    expect(verdictOf({ failure: 'provider_error' }, COOLDOWN)).toEqual({
      retry: false,
      label: 'stream',
    });
  });
});

describe('backoffMs', () => {
  it('draws from [0, base x 2^n), capped at the maximum', () => {
    expect(backoffMs(0, 250, 4_000, () => 0.999)).toBe(249);
    expect(backoffMs(2, 250, 4_000, () => 0.5)).toBe(500);
    expect(backoffMs(10, 250, 4_000, () => 0.999)).toBe(3_996);
    expect(backoffMs(3, 250, 4_000, () => 0)).toBe(0);
  });

  it('stays finite for any retry number', () => {
    expect(backoffMs(5_000, 250, 4_000, () => 0.5)).toBe(2_000);
  });
});
