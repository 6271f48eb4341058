import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { BillingRepository } from '../src/billing/billing.repository';
import { Metrics } from '../src/infra/metrics/metrics';
import { MetricsServer } from '../src/infra/metrics/metrics-server';
import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import { stripeEvent, stripeSignature } from './support/billing-events';
import { billingEnv, deliver } from './support/billing';
import { chat, listen } from './support/chat-client';
import { registerUser, registerVerifiedUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { totpCode } from './support/totp';

/** One sample of the Prometheus text format: `name{label="value",...} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Scrape {
  status: number;
  contentType: string;
  body: string;
  samples: Sample[];
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(
      line,
    );
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(
      /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g,
    ))
      labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** GET over a plain socket (the metrics listener is not the app supertest knows). */
function get(
  url: string,
): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { headers: { Connection: 'close' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A port free right now on the loopback (METRICS_PORT must be 1-65535, so not 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The value of the sample with exactly these labels (0 when absent: a counter not moved yet). */
function valueOf(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  const wanted = Object.entries(labels);
  const found = samples.find(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === wanted.length &&
      wanted.every(([key, value]) => sample.labels[key] === value),
  );
  return found?.value ?? 0;
}

describe('Prometheus metrics (METRICS_PORT)', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  let paddle: FakePaddle;
  let base: string;
  let metricsUrl: string;
  let user: Awaited<ReturnType<typeof registerUser>>;
  let enrolling: Awaited<ReturnType<typeof registerVerifiedUser>>;
  let before: Scrape;
  let after: Scrape;

  const scrape = async (): Promise<Scrape> => {
    const res = await get(`${metricsUrl}/metrics`);
    return {
      ...res,
      samples: res.status === 200 ? parseExposition(res.body) : [],
    };
  };
  const moved = (name: string, labels: Record<string, string> = {}) =>
    valueOf(after.samples, name, labels) -
    valueOf(before.samples, name, labels);

  beforeAll(async () => {
    const port = await freePort();
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    t = await bootTestApp({
      ...billingEnv(stripe, paddle),
      HOST: '127.0.0.1',
      METRICS_PORT: String(port),
      // Slow enough that a run is still generating when the test scrapes during it.
      ECHO_DELAY_MS: '40',
      TRUST_PROXY: 'loopback',
      RATE_LIMIT_LOGIN_EMAIL: '2/60',
      RATE_LIMIT_TWO_FACTOR_USER: '1/60',
    });
    metricsUrl = `http://127.0.0.1:${port}`;
    base = await listen(t);
    before = await scrape();
    user = await registerUser(t.http);

    // A chat through local/echo, scraped while it generates.
    const call = chat(base, user.cookie, {
      model: 'local/echo',
      idempotencyKey: randomUUID(),
      messages: [
        {
          role: 'user',
          content: 'one two three four five six seven eight nine ten',
        },
      ],
    });
    await call.firstChunk;
    const during = await scrape();
    expect(valueOf(during.samples, 'chat_live_streams')).toBeGreaterThanOrEqual(
      1,
    );
    const answer = await call.response;
    expect(answer.status).toBe(200);
    await t.http
      .get(`/v1/conversations/${answer.headers['x-conversation-id'] as string}`)
      .set('Cookie', user.cookie)
      .expect(200);

    // A quota refusal: the free plan's credits of today are used up.
    await sql(`UPDATE "DailyUsage" SET used = 1000 WHERE "userId" = $1`, [
      user.id,
    ]);
    const refused = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'more' }],
      });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('quota_exceeded');

    // A rate-limited login: the limit counts the user's email, which must not become a label.
    const login = () =>
      t.http
        .post('/v1/auth/login')
        .set('X-Forwarded-For', '10.9.8.7')
        .send({ email: user.email, password: 'wrong password 123' });
    for (let attempt = 0; attempt < 2; attempt++)
      expect((await login()).status).toBe(401);
    expect((await login()).status).toBe(429);

    // The per-account limit of code checks (counted by the two-factor service, not the guard).
    enrolling = await registerVerifiedUser(t.http);
    const setup = await t.http
      .post('/v1/auth/2fa/setup')
      .set('Cookie', enrolling.cookie)
      .expect(201);
    // A code of no nearby time step: wrong whatever the clock says.
    const wrongCode = totpCode(setup.body.secret as string, Date.now(), 1000);
    await t.http
      .post('/v1/auth/2fa/enable')
      .set('Cookie', enrolling.cookie)
      .send({ code: wrongCode })
      .expect(400);
    expect(
      (
        await t.http
          .post('/v1/auth/2fa/enable')
          .set('Cookie', enrolling.cookie)
          .send({ code: wrongCode })
      ).status,
    ).toBe(429);

    await t.http.get('/v1/no-such-route/123').expect(404);
    // Refused by the body parser, before routing: still labelled with the route it was sent to.
    await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .set('Content-Type', 'application/json')
      .send('{"model": ')
      .expect(400);

    // Webhooks: applied, its redelivery, a forged one, and one the database fails.
    const ignored = stripeEvent('customer.created', {
      id: 'cus_metrics',
      object: 'customer',
    });
    await deliver(t, 'stripe', ignored).expect(200);
    expect(
      (await deliver(t, 'stripe', ignored).expect(200)).body.duplicate,
    ).toBe(true);
    await deliver(
      t,
      'stripe',
      ignored,
      stripeSignature(ignored, { secret: 'whsec_someone_else' }),
    ).expect(400);
    // recordEvent is the webhooks' own write (no timer of the app calls it meanwhile).
    jest
      .spyOn(t.app.get(BillingRepository), 'recordEvent')
      .mockRejectedValueOnce(new Error('database down (simulated)'));
    await deliver(
      t,
      'stripe',
      stripeEvent('customer.created', {
        id: 'cus_metrics_2',
        object: 'customer',
      }),
    ).expect(503);
    after = await scrape();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
    await stripe.close();
    await paddle.close();
  });

  it('serves /metrics in the Prometheus text format on its own port', () => {
    expect(after.status).toBe(200);
    expect(after.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(after.body).toMatch(/^# HELP /m);
    expect(after.body).toMatch(
      /^# TYPE http_request_duration_seconds histogram$/m,
    );
  });

  it('has the process metrics', () => {
    const names = new Set(after.samples.map((sample) => sample.name));
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ])
      expect(names).toContain(name);
  });

  it('times requests by method, route template and status, never by raw URL', () => {
    expect(
      moved('http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/chat',
        status: '200',
      }),
    ).toBe(1);
    expect(
      moved('http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/chat',
        status: '429',
      }),
    ).toBe(1);
    expect(
      moved('http_request_duration_seconds_count', {
        method: 'GET',
        route: '/v1/conversations/:id',
        status: '200',
      }),
    ).toBe(1);
    expect(
      moved('http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/auth/login',
        status: '429',
      }),
    ).toBe(1);
    expect(
      moved('http_request_duration_seconds_count', {
        method: 'GET',
        route: 'unmatched',
        status: '404',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      moved('http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/chat',
        status: '400',
      }),
    ).toBe(1);
    expect(
      moved('http_request_duration_seconds_bucket', {
        method: 'POST',
        route: '/v1/chat',
        status: '200',
        le: '+Inf',
      }),
    ).toBe(1);
    const routes = new Set(
      after.samples
        .filter(
          (sample) => sample.name === 'http_request_duration_seconds_count',
        )
        .map((sample) => sample.labels.route),
    );
    for (const route of routes)
      expect(route === 'unmatched' || route.startsWith('/v1/')).toBe(true);
    expect(
      [...routes].some((route) =>
        /no-such-route|[0-9a-f]{8}-[0-9a-f]{4}-/.test(route),
      ),
    ).toBe(false);
  });

  it('counts runs by outcome, tokens by direction and model, and the time to the first token', () => {
    expect(
      moved('chat_runs_total', { model: 'local/echo', outcome: 'completed' }),
    ).toBe(1);
    // local/echo reports one token per word: 10 words in, "Echo:" and the 10 words out.
    expect(
      moved('chat_tokens_total', { direction: 'input', model: 'local/echo' }),
    ).toBe(10);
    expect(
      moved('chat_tokens_total', { direction: 'output', model: 'local/echo' }),
    ).toBe(11);
    expect(
      moved('chat_provider_time_to_first_token_seconds_count', {
        provider: 'local',
        model: 'local/echo',
      }),
    ).toBe(1);
    expect(valueOf(after.samples, 'chat_live_streams')).toBe(0);
  });

  it('counts quota refusals by plan, rate-limit refusals by rule and webhooks by provider and outcome', () => {
    expect(moved('chat_quota_refusals_total', { plan: 'free' })).toBe(1);
    expect(moved('rate_limit_refusals_total', { rule: 'login-email' })).toBe(1);
    expect(
      moved('rate_limit_refusals_total', { rule: 'two-factor-user' }),
    ).toBe(1);
    for (const outcome of ['applied', 'duplicate', 'invalid', 'failed'])
      expect([
        outcome,
        moved('billing_webhook_events_total', { provider: 'stripe', outcome }),
      ]).toEqual([outcome, 1]);
  });

  it('reports the database pool', () => {
    expect(valueOf(after.samples, 'db_pool_connections_max')).toBe(
      t.config.database.poolSize,
    );
    expect(
      valueOf(after.samples, 'db_pool_connections_in_use') +
        valueOf(after.samples, 'db_pool_connections_idle'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      after.samples.some((sample) => sample.name === 'db_pool_waiting_queries'),
    ).toBe(true);
  });

  it('puts no user id or email in any label', () => {
    const values = after.samples.flatMap((sample) =>
      Object.values(sample.labels),
    );
    expect(values.length).toBeGreaterThan(50);
    for (const value of values) {
      for (const account of [user, enrolling]) {
        expect(value).not.toContain(account.id);
        expect(value.toLowerCase()).not.toContain(account.email.toLowerCase());
      }
      expect(value).not.toContain('@');
    }
    for (const account of [user, enrolling]) {
      expect(after.body).not.toContain(account.id);
      expect(after.body).not.toContain(account.email);
    }
  });

  it('is not served by the API port, and the metrics port serves nothing but /metrics', async () => {
    for (const path of ['/metrics', '/v1/metrics']) {
      const res = await t.http.get(path).expect(404);
      expect(res.headers['content-type']).toMatch(
        /^application\/problem\+json/,
      );
    }
    expect((await get(`${metricsUrl}/v1/plans`)).status).toBe(404);
  });
});

describe('metrics without METRICS_PORT', () => {
  it('starts no listener and records nothing', async () => {
    const t = await bootTestApp();
    try {
      expect(t.config.metrics.port).toBeUndefined();
      expect(t.app.get(MetricsServer).address).toBeUndefined();
      expect(t.app.get(Metrics).enabled).toBe(false);
      await t.http.get('/metrics').expect(404);
    } finally {
      await t.close();
    }
  });

  it('closes the listener when the app closes', async () => {
    const port = await freePort();
    const t = await bootTestApp({
      HOST: '127.0.0.1',
      METRICS_PORT: String(port),
    });
    expect(t.app.get(MetricsServer).address?.port).toBe(port);
    expect((await get(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await t.close();
    expect(t.app.get(MetricsServer).address).toBeUndefined();
    await expect(get(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow(
      /ECONNREFUSED/,
    );
  });
});
