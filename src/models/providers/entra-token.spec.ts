import { EntraSettings, EntraTokenCache, TokenFetch } from './entra-token';
import { ProviderError } from './model-provider';

const SECRET = 'entra-secret-0123456789abcdef';
const settings: EntraSettings = {
  tokenUrl: 'https://login.example.test/tenant-1/oauth2/v2.0/token',
  clientId: 'client-1',
  clientSecret: SECRET,
  scope: 'https://cognitiveservices.azure.com/.default',
};

type Answer = {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
};

/**
 * A token endpoint played by a function: each call takes the next answer (a value, or a promise the test
 * settles), and the calls are kept.
 */
function endpoint(...answers: (Answer | Promise<Answer> | Error)[]) {
  const calls: {
    url: string;
    form: Record<string, string>;
    headers: Record<string, string>;
  }[] = [];
  const fetch: TokenFetch = async (url, init) => {
    calls.push({
      url,
      form: Object.fromEntries(new URLSearchParams(init.body)),
      headers: init.headers,
    });
    const next = answers.shift();
    if (next === undefined) throw new Error('unexpected token request');
    if (next instanceof Error) throw next;
    const { status, body, headers = {} } = await next;
    return {
      status,
      headers: { get: (name: string) => headers[name.toLowerCase()] ?? null },
      text: () =>
        Promise.resolve(typeof body === 'string' ? body : JSON.stringify(body)),
    };
  };
  return { fetch, calls };
}

const issued = (token: string, expiresIn = 3600): Answer => ({
  status: 200,
  body: {
    token_type: 'Bearer',
    expires_in: expiresIn,
    ext_expires_in: expiresIn,
    access_token: token,
  },
});

/** A clock the test moves. */
function clock(start = Date.UTC(2026, 0, 1)) {
  const state = { now: start };
  return { now: () => state.now, advance: (ms: number) => (state.now += ms) };
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ProviderError);
  expect(
    `${(error as Error).message} ${(error as Error).stack ?? ''}`,
  ).not.toContain(SECRET);
  return error as ProviderError;
}

describe('EntraTokenCache', () => {
  it('posts the client-credentials form once and reuses the token', async () => {
    const { fetch, calls } = endpoint(issued('tok-1'));
    const time = clock();
    const cache = new EntraTokenCache('azure', settings, {
      fetch,
      now: time.now,
    });
    expect(await cache.token()).toBe('tok-1');
    time.advance(30 * 60_000);
    expect(await cache.token()).toBe('tok-1');
    expect(calls).toEqual([
      {
        url: settings.tokenUrl,
        form: {
          grant_type: 'client_credentials',
          client_id: 'client-1',
          client_secret: SECRET,
          scope: 'https://cognitiveservices.azure.com/.default',
        },
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
      },
    ]);
  });

  it('fetches a new token 5 minutes before the old one expires, not earlier', async () => {
    const { fetch, calls } = endpoint(
      issued('tok-1', 3600),
      issued('tok-2', 3600),
    );
    const time = clock();
    const cache = new EntraTokenCache('azure', settings, {
      fetch,
      now: time.now,
    });
    await cache.token();
    time.advance(55 * 60_000 - 1);
    expect(await cache.token()).toBe('tok-1');
    time.advance(1);
    expect(await cache.token()).toBe('tok-2');
    expect(calls).toHaveLength(2);
  });

  it("keeps a token that lives under 10 minutes for half its lifetime (Entra's v1 string expires_in too)", async () => {
    const { fetch, calls } = endpoint(
      { status: 200, body: { access_token: 'tok-1', expires_in: '120' } },
      issued('tok-2', 120),
    );
    const time = clock();
    const cache = new EntraTokenCache('azure', settings, {
      fetch,
      now: time.now,
    });
    await cache.token();
    time.advance(59_999);
    expect(await cache.token()).toBe('tok-1');
    time.advance(1);
    expect(await cache.token()).toBe('tok-2');
    expect(calls).toHaveLength(2);
  });

  it('has concurrent callers wait for one request', async () => {
    let answer!: (value: Answer) => void;
    const { fetch, calls } = endpoint(
      new Promise<Answer>((resolve) => (answer = resolve)),
    );
    const cache = new EntraTokenCache('azure', settings, { fetch });
    const waiting = [cache.token(), cache.token(), cache.token()];
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toHaveLength(1);
    answer(issued('tok-1'));
    expect(await Promise.all(waiting)).toEqual(['tok-1', 'tok-1', 'tok-1']);
    expect(await cache.token()).toBe('tok-1');
    expect(calls).toHaveLength(1);
  });

  it('ends only the aborted caller’s wait: the request goes on for the others', async () => {
    let answer!: (value: Answer) => void;
    const { fetch, calls } = endpoint(
      new Promise<Answer>((resolve) => (answer = resolve)),
    );
    const cache = new EntraTokenCache('azure', settings, { fetch });
    const abort = new AbortController();
    const leaving = cache.token(abort.signal);
    const staying = cache.token(new AbortController().signal);
    abort.abort();
    await expect(leaving).rejects.toThrow(
      'aborted while waiting for the Entra token',
    );
    answer(issued('tok-1'));
    expect(await staying).toBe('tok-1');
    expect(calls).toHaveLength(1);
  });

  it('a refused request: an http ProviderError with Entra’s error, never the secret, and nothing cached', async () => {
    const { fetch, calls } = endpoint(
      {
        status: 401,
        body: {
          error: 'invalid_client',
          error_description: `AADSTS7000215: Invalid client secret provided: ${SECRET}.\r\nTrace ID: 1f0e\r\nCorrelation ID: 9a8b`,
          error_codes: [7000215],
        },
      },
      issued('tok-2'),
    );
    const cache = new EntraTokenCache('azure', settings, { fetch });
    const error = await failure(cache.token());
    expect(error.message).toBe(
      'azure: Entra token request failed: HTTP 401: invalid_client: AADSTS7000215: Invalid client secret provided: [redacted].',
    );
    expect(error.failure).toEqual({
      kind: 'http',
      status: 401,
      retryAfterMs: undefined,
    });
    expect(await cache.token()).toBe('tok-2');
    expect(calls).toHaveLength(2);
  });

  it('passes a throttled token endpoint’s Retry-After on, and calls an answer without a token malformed', async () => {
    const { fetch } = endpoint(
      {
        status: 429,
        body: 'Too many requests',
        headers: { 'retry-after': '7' },
      },
      { status: 200, body: { token_type: 'Bearer', expires_in: 3600 } },
      { status: 200, body: '<html>sign in</html>' },
    );
    const cache = new EntraTokenCache('azure', settings, { fetch });
    const throttled = await failure(cache.token());
    expect(throttled.message).toBe(
      'azure: Entra token request failed: HTTP 429',
    );
    expect(throttled.failure).toEqual({
      kind: 'http',
      status: 429,
      retryAfterMs: 7000,
    });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const malformed = await failure(cache.token());
      expect(malformed.message).toBe(
        'azure: Entra token request failed: malformed answer (no access_token or expires_in)',
      );
      expect(malformed.failure).toEqual({ kind: 'http', status: 200 });
    }
  });

  it('a connection failure or no answer in time: a connection ProviderError naming it', async () => {
    const refused = endpoint(
      new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
          code: 'ECONNREFUSED',
        }),
      }),
    );
    const error = await failure(
      new EntraTokenCache('azure', settings, { fetch: refused.fetch }).token(),
    );
    expect(error.message).toBe(
      'azure: Entra token request failed: connect ECONNREFUSED 127.0.0.1:9',
    );
    expect(error.failure).toEqual({ kind: 'connection' });

    const hanging: TokenFetch = (_url, init) =>
      new Promise((_resolve, reject) =>
        init.signal.addEventListener('abort', () =>
          reject(init.signal.reason as Error),
        ),
      );
    const started = Date.now();
    const timedOut = await failure(
      new EntraTokenCache('azure', settings, {
        fetch: hanging,
        timeoutMs: 50,
      }).token(),
    );
    expect(timedOut.message).toBe(
      'azure: Entra token request failed: no answer within 50 ms',
    );
    expect(timedOut.failure).toEqual({ kind: 'connection' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('fetches again once the token was invalidated (Azure refused it)', async () => {
    const { fetch, calls } = endpoint(issued('tok-1'), issued('tok-2'));
    const cache = new EntraTokenCache('azure', settings, { fetch });
    expect(await cache.token()).toBe('tok-1');
    cache.invalidate();
    expect(await cache.token()).toBe('tok-2');
    expect(calls).toHaveLength(2);
  });
});
