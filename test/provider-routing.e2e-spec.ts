import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyCooldowns } from '../src/models/routing/key-cooldowns';
import { chat, listen, parseEvents, post } from './support/chat-client';
import { eventually } from './support/eventually';
import { registerUser } from './support/factories';
import {
  ScriptedModelServer,
  ScriptedOutcome,
} from './support/scripted-model-server';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { createMigratedDatabase } from './support/test-database';

/**
 * Model routing end to end (docs/adr/0063-providers-and-routing.md): retries before the first token,
 * key pools with cooldowns shared by all instances, fallbacks the paying plan allows, and billing at the
 * model that answered. On a database of its own: the catalog sync of this suite's catalog would
 * deactivate models the other suites rely on.
 *
 * Prices (credits), chosen so every figure below is exact:
 * - route/primary: 2 a request + 10 per 1k input (1 per 1k cached) + 1 an output token, at most 50 output
 *   tokens: a short prompt reserves 2 + 1 + 50 = 53; an answer of 2 words with 7 input tokens costs 5.
 * - route/backup: 10 a request + 10 per 1k input + 1 an output token, at most 50: reserves 61 (the
 *   reservation grows by 8 when it takes over); 3 words with 7 input tokens cost 14.
 * - route/not-in-plan: first in route/primary's fallbacks but only in the `team` plan: never called for
 *   a `pro` user (checked after every test).
 *
 * Upstreams: `primary` (OpenAI wire, keys key-a and key-b), `backup` (Anthropic wire, one key) and `spare`
 * (OpenAI wire, no key), each a ScriptedModelServer. Instances: A (Prometheus on METRICS_PORT) and B (a
 * small first-token timeout), sharing the database and the Redis prefix, so a key cooldown is shared;
 * PROVIDER_MAX_ATTEMPTS is 4 on both. Order matters twice: the key pool test runs first (fresh round
 * robins start at key-a) and the 401 test last (it leaves every key of `primary` resting).
 */

const PRIMARY_RESERVATION = 53;
const BACKUP_RESERVATION = 61;
const PRO_DAILY_CREDITS = 2000;
/** Instance B's PROVIDER_FIRST_TOKEN_TIMEOUT_MS: small, with room for a loaded machine's normal calls. */
const FIRST_TOKEN_TIMEOUT_MS = 500;

interface CatalogFile {
  endpoints?: Record<string, unknown>;
  models: Record<string, unknown>[];
  plans: { code: string; models: string[] }[];
}

function routingCatalog(spareUrl: string): CatalogFile {
  const catalog = JSON.parse(
    readFileSync('config/catalog.json', 'utf8'),
  ) as CatalogFile;
  catalog.endpoints = {
    ...catalog.endpoints,
    // Base URLs from the environment (one with a default), keys from a pool of two in one variable.
    primary: {
      kind: 'openai',
      baseUrl: '${ROUTE_PRIMARY_URL}',
      apiKeyEnv: ['ROUTE_KEYS'],
    },
    backup: {
      kind: 'anthropic',
      baseUrl: '${ROUTE_BACKUP_URL:-http://127.0.0.1:9}',
      apiKeyEnv: 'ROUTE_BACKUP_KEY',
    },
    // No key: a local OpenAI-compatible server.
    spare: { kind: 'openai', baseUrl: spareUrl },
  };
  catalog.models.push(
    {
      id: 'route/primary',
      name: 'Routed primary',
      endpoint: 'primary',
      upstreamModel: 'primary-model',
      pricing: {
        perRequest: 2,
        per1kInputTokens: 10,
        per1kCachedInputTokens: 1,
        per1kOutputTokens: 1000,
      },
      maxOutputTokens: 50,
      contextWindow: 8000,
      fallbacks: ['route/not-in-plan', 'route/backup'],
    },
    {
      id: 'route/backup',
      name: 'Routed backup',
      endpoint: 'backup',
      upstreamModel: 'backup-model',
      pricing: {
        perRequest: 10,
        per1kInputTokens: 10,
        per1kOutputTokens: 1000,
      },
      maxOutputTokens: 50,
      contextWindow: 8000,
    },
    {
      id: 'route/not-in-plan',
      name: 'Routed, another plan',
      endpoint: 'spare',
      upstreamModel: 'spare-model',
      pricing: { perRequest: 1 },
      maxOutputTokens: 50,
      contextWindow: 8000,
    },
  );
  for (const plan of catalog.plans) {
    if (plan.code === 'pro') plan.models.push('route/primary', 'route/backup');
    if (plan.code === 'team') plan.models.push('route/not-in-plan');
  }
  return catalog;
}

const ask = (content: string, idempotencyKey: string = randomUUID()) => ({
  model: 'route/primary',
  idempotencyKey,
  messages: [{ role: 'user', content }],
});

const SSE = { Accept: 'text/event-stream' };

const fail = (
  status: number,
  headers?: Record<string, string>,
): ScriptedOutcome => ({
  kind: 'http',
  status,
  message: `scripted ${status}`,
  ...(headers ? { headers } : {}),
});
const ok = (...words: string[]): ScriptedOutcome => ({ kind: 'ok', words });

/** One sample of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
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

/** The value of the sample with exactly these labels (0 when absent: a counter not moved yet). */
function valueOf(
  samples: Sample[],
  name: string,
  labels: Record<string, string>,
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

function getText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { headers: { Connection: 'close' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(body)
            : reject(new Error(`metrics answered ${res.statusCode}`)),
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

describe('model routing: retries, key pools, fallbacks and billing', () => {
  let database: { url: string; drop: () => Promise<void> };
  let dir: string;
  let primary: ScriptedModelServer;
  let backup: ScriptedModelServer;
  let spare: ScriptedModelServer;
  /** Instance A: Prometheus on METRICS_PORT. */
  let a: TestApp;
  /** Instance B: same database and Redis prefix, and a first-token timeout of FIRST_TOKEN_TIMEOUT_MS. */
  let b: TestApp;
  let baseA: string;
  let baseB: string;
  let metricsUrl: string;
  let shared: Record<string, string>;

  const query = <T = Record<string, unknown>>(
    text: string,
    values: unknown[] = [],
  ) => sql<T>(text, values, database.url);

  async function proUser(t: TestApp) {
    const user = await registerUser(t.http);
    await query(`UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`, [
      user.id,
    ]);
    return user;
  }

  async function counts(userId: string) {
    const [row] = await query<{
      requests: number;
      ledger: number;
      credits: number;
      used: number;
      reserved: number;
    }>(
      `SELECT (SELECT count(*)::int FROM "ChatRequest" WHERE "userId" = $1) AS requests,
              (SELECT count(*)::int FROM "LedgerEntry" WHERE "userId" = $1) AS ledger,
              COALESCE((SELECT sum(credits)::int FROM "LedgerEntry" WHERE "userId" = $1), 0) AS credits,
              COALESCE((SELECT sum(used)::int FROM "DailyUsage" WHERE "userId" = $1), 0) AS used,
              COALESCE((SELECT sum(reserved)::int FROM "DailyUsage" WHERE "userId" = $1), 0) AS reserved`,
      [userId],
    );
    return row;
  }

  const ledgerOf = (userId: string) =>
    query(
      `SELECT status::text, "modelId", "requestedModelId", "inputTokens", "cachedInputTokens",
              "outputTokens", credits
         FROM "LedgerEntry" WHERE "userId" = $1 ORDER BY "createdAt"`,
      [userId],
    );

  const requestsOf = (userId: string) =>
    query(
      `SELECT status::text, "modelId", "answeredModelId", "errorCode", "reservedCredits"
         FROM "ChatRequest" WHERE "userId" = $1 ORDER BY "createdAt"`,
      [userId],
    );

  const scrape = async () => parseExposition(await getText(metricsUrl));

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_routing');
    [primary, backup, spare] = await Promise.all([
      new ScriptedModelServer().start(),
      new ScriptedModelServer().start(),
      new ScriptedModelServer().start(),
    ]);
    dir = mkdtempSync(join(tmpdir(), 'routing-catalog-'));
    const catalogFile = join(dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify(routingCatalog(spare.baseUrl)));
    shared = {
      DATABASE_URL: database.url,
      CATALOG_FILE: catalogFile,
      REDIS_KEY_PREFIX: `test:${randomUUID()}:`,
      ROUTE_PRIMARY_URL: primary.baseUrl,
      ROUTE_BACKUP_URL: backup.baseUrl,
      ROUTE_KEYS: 'key-a,key-b',
      ROUTE_BACKUP_KEY: 'backup-key',
      // Below the default (6), so the cap shows: 3 calls of the model asked for, then 1 of a fallback.
      PROVIDER_MAX_ATTEMPTS: '4',
    };
    const port = await freePort();
    a = await bootTestApp({
      ...shared,
      HOST: '127.0.0.1',
      METRICS_PORT: String(port),
    });
    b = await bootTestApp({
      ...shared,
      PROVIDER_FIRST_TOKEN_TIMEOUT_MS: String(FIRST_TOKEN_TIMEOUT_MS),
    });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    [baseA, baseB] = [await listen(a), await listen(b)];
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await Promise.all([primary?.close(), backup?.close(), spare?.close()]);
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    primary.reset(ok('Hello', ' world'));
    backup.reset(ok('from', ' the', ' backup'));
    spare.reset(ok('never'));
  });

  afterEach(() => {
    // route/not-in-plan (the only model on `spare`) is outside the `pro` plan: never called.
    expect(spare.calls).toHaveLength(0);
    // Every outcome a test scripted was asked for.
    expect(primary.pending + backup.pending).toBe(0);
  });

  // First: on fresh instances, whose round robin starts at the pool's first key (key-a).
  it('a 429 with Retry-After: 30 rests key-a on every instance: key-b at once, key-a used by no instance (pub/sub, and read back at start)', async () => {
    const user = await proUser(a);
    const before = await scrape();
    primary.script(fail(429, { 'Retry-After': '30' }));
    const started = Date.now();
    const first = await chat(baseA, user.cookie, ask('pool one')).response;
    expect(first.status).toBe(200);
    expect(first.body).toBe('Hello world');
    // The other key is taken at once: no wait for the 30 s the upstream asked for.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(primary.calls.map((call) => call.authorization)).toEqual([
      'Bearer key-a',
      'Bearer key-b',
    ]);
    expect(primary.calls.map((call) => call.outcome.kind)).toEqual([
      'http',
      'ok',
    ]);
    // Rested for the Retry-After (30 s), not PROVIDER_KEY_COOLDOWN_MS (60 s).
    const rested = a.app
      .get(KeyCooldowns)
      .all()
      .filter((cooldown) => cooldown.endpoint === 'primary');
    expect(rested).toHaveLength(1);
    expect(rested[0].until - primary.calls[0].at).toBeGreaterThan(29_000);
    expect(rested[0].until - primary.calls[0].at).toBeLessThan(31_000);

    // Within the cooldown, instance A never takes key-a (its round robin would, every other call).
    for (const text of ['pool two', 'pool three'])
      expect((await chat(baseA, user.cookie, ask(text)).response).status).toBe(
        200,
      );
    // Instance B hears the cooldown (pub/sub, milliseconds), then skips key-a too.
    const cooldownsB = b.app.get(KeyCooldowns);
    await eventually(
      () => cooldownsB.all().some((c) => c.endpoint === 'primary'),
      3_000,
      10,
    );
    for (const text of ['pool four', 'pool five'])
      expect((await chat(baseB, user.cookie, ask(text)).response).status).toBe(
        200,
      );
    // An instance started during the cooldown reads it from Redis at start.
    const c = await bootTestApp(shared);
    try {
      expect(
        (await chat(await listen(c), user.cookie, ask('pool six')).response)
          .status,
      ).toBe(200);
    } finally {
      await c.close();
    }
    expect(primary.calls.map((call) => call.key)).toEqual([
      'key-a',
      'key-b',
      'key-b',
      'key-b',
      'key-b',
      'key-b',
      'key-b',
    ]);
    expect(backup.calls).toHaveLength(0);
    expect(await counts(user.id)).toEqual({
      requests: 6,
      ledger: 6,
      credits: 30,
      used: 30,
      reserved: 0,
    });

    // Prometheus (instance A): one key rested, one failure (http_429), the other key as one retry.
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(
      moved('chat_provider_key_cooldowns_total', { endpoint: 'primary' }),
    ).toBe(1);
    expect(
      moved('chat_provider_errors_total', {
        endpoint: 'primary',
        model: 'route/primary',
        reason: 'http_429',
      }),
    ).toBe(1);
    expect(
      moved('chat_provider_retries_total', {
        endpoint: 'primary',
        model: 'route/primary',
      }),
    ).toBe(1);
  });

  it('a 500 then an answer: retried once, one answer billed once, reservation released; a replay calls nothing', async () => {
    const user = await proUser(a);
    const key = randomUUID();
    primary.script(fail(500));
    primary.otherwise = ok('retried', ' answer');
    const res = await chat(baseA, user.cookie, ask('retry me', key)).response;
    expect(res.status).toBe(200);
    expect(res.body).toBe('retried answer');
    expect(res.complete).toBe(true);
    expect(primary.calls.map((call) => call.outcome.kind)).toEqual([
      'http',
      'ok',
    ]);
    expect(primary.calls.map((call) => call.model)).toEqual([
      'primary-model',
      'primary-model',
    ]);
    expect(backup.calls).toHaveLength(0);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      credits: 5,
      used: 5,
      reserved: 0,
    });
    expect(await ledgerOf(user.id)).toEqual([
      {
        status: 'completed',
        modelId: 'route/primary',
        requestedModelId: null,
        inputTokens: 7,
        cachedInputTokens: 0,
        outputTokens: 2,
        credits: 5,
      },
    ]);
    expect(await requestsOf(user.id)).toEqual([
      {
        status: 'completed',
        modelId: 'route/primary',
        answeredModelId: null,
        errorCode: null,
        reservedCredits: PRIMARY_RESERVATION,
      },
    ]);

    const replay = await chat(baseA, user.cookie, ask('retry me', key))
      .response;
    expect(replay.status).toBe(200);
    expect(replay.body).toBe('retried answer');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(primary.calls).toHaveLength(2);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      credits: 5,
      used: 5,
      reserved: 0,
    });
  });

  it('a stream cut before its first text is retried: the retry answers, billed once', async () => {
    const user = await proUser(a);
    primary.script({ kind: 'break-after', words: [] });
    primary.otherwise = ok('second', ' try');
    const res = await chat(baseA, user.cookie, ask('cut early')).response;
    expect(res.status).toBe(200);
    expect(res.body).toBe('second try');
    expect(res.complete).toBe(true);
    expect(primary.calls).toHaveLength(2);
    expect(backup.calls).toHaveLength(0);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      credits: 5,
      used: 5,
      reserved: 0,
    });
  });

  it('a provider error event before any text is retried; after text it ends the answer, not retried', async () => {
    const user = await proUser(a);
    primary.script({ kind: 'error-after', words: [] });
    primary.otherwise = ok('fine', ' now');
    const retried = await chat(baseA, user.cookie, ask('error event')).response;
    expect(retried.status).toBe(200);
    expect(retried.body).toBe('fine now');
    expect(primary.calls).toHaveLength(2);

    primary.reset(ok('never', ' asked'));
    primary.script({ kind: 'error-after', words: ['half'] });
    const broken = await chat(baseA, user.cookie, ask('error after text'))
      .response;
    expect(broken.status).toBe(200);
    expect(broken.body).toBe('half');
    expect(broken.complete).toBe(false);
    expect(primary.calls).toHaveLength(1);
    expect(backup.calls).toHaveLength(0);
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({ status: 'completed', credits: 5 }),
      // The estimated input (1 credit) and the one delivered token.
      expect.objectContaining({
        status: 'partial',
        modelId: 'route/primary',
        outputTokens: 1,
        credits: 4,
      }),
    ]);
    expect(await counts(user.id)).toEqual({
      requests: 2,
      ledger: 2,
      credits: 9,
      used: 9,
      reserved: 0,
    });
  });

  it('every call of the model failing (503): the backup answers, billed at its price, named in meta, usage and the ledger; Prometheus counts retries, errors and the fallback', async () => {
    const user = await proUser(a);
    const key = randomUUID();
    primary.otherwise = fail(503);
    const before = await scrape();
    const res = await post(
      baseA,
      '/v1/chat',
      user.cookie,
      ask('fall back', key),
      SSE,
    ).response;
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(
      'text/event-stream; charset=utf-8',
    );
    const events = parseEvents(res.body);
    expect(events[0]).toEqual({
      event: 'meta',
      data: {
        conversationId: res.headers['x-conversation-id'],
        requestId: expect.any(String),
        model: 'route/backup',
        requestedModel: 'route/primary',
      },
    });
    expect(
      events
        .filter((event) => event.event === 'delta')
        .map((event) => event.data.text)
        .join(''),
    ).toBe('from the backup');
    expect(events.slice(-2)).toEqual([
      {
        event: 'usage',
        data: {
          inputTokens: 7,
          cachedInputTokens: 0,
          outputTokens: 3,
          credits: 14,
          model: 'route/backup',
        },
      },
      { event: 'done', data: { status: 'completed' } },
    ]);
    // The model and its PROVIDER_RETRIES (2) retries, then the backup (route/not-in-plan skipped: not pro).
    expect(primary.calls).toHaveLength(3);
    expect(backup.calls).toHaveLength(1);
    expect(backup.calls[0]).toEqual(
      expect.objectContaining({
        path: '/messages',
        apiKey: 'backup-key',
        model: 'backup-model',
        lastUserText: 'fall back',
      }),
    );
    expect(await ledgerOf(user.id)).toEqual([
      {
        status: 'completed',
        modelId: 'route/backup',
        requestedModelId: 'route/primary',
        inputTokens: 7,
        cachedInputTokens: 0,
        outputTokens: 3,
        credits: 14,
      },
    ]);
    expect(await requestsOf(user.id)).toEqual([
      {
        status: 'completed',
        modelId: 'route/primary',
        answeredModelId: 'route/backup',
        errorCode: null,
        // Grown to the backup's reservation before it was called.
        reservedCredits: BACKUP_RESERVATION,
      },
    ]);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      credits: 14,
      used: 14,
      reserved: 0,
    });

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(
      moved('chat_provider_errors_total', {
        endpoint: 'primary',
        model: 'route/primary',
        reason: 'http_5xx',
      }),
    ).toBe(3);
    expect(
      moved('chat_provider_retries_total', {
        endpoint: 'primary',
        model: 'route/primary',
      }),
    ).toBe(2);
    expect(
      moved('chat_provider_fallbacks_total', {
        from_model: 'route/primary',
        to_model: 'route/backup',
      }),
    ).toBe(1);
    expect(
      after.some(
        (sample) =>
          sample.name === 'chat_provider_fallbacks_total' &&
          sample.labels.to_model === 'route/not-in-plan',
      ),
    ).toBe(false);

    // The conversation and the usage list name the model billed, and the one asked for.
    const conversation = await a.http
      .get(`/v1/conversations/${String(res.headers['x-conversation-id'])}`)
      .set('Cookie', user.cookie)
      .expect(200);
    expect(conversation.body.messages.at(-1)).toEqual(
      expect.objectContaining({
        role: 'assistant',
        content: 'from the backup',
        usage: {
          inputTokens: 7,
          cachedInputTokens: 0,
          outputTokens: 3,
          credits: 14,
          model: 'route/backup',
          requestedModel: 'route/primary',
        },
      }),
    );
    const usageList = await a.http
      .get('/v1/billing/usage')
      .set('Cookie', user.cookie)
      .expect(200);
    expect(usageList.body.data).toEqual([
      expect.objectContaining({ model: 'route/backup', credits: 14 }),
    ]);

    // The replay tells the same story without calling anyone.
    const replay = await post(
      baseA,
      '/v1/chat',
      user.cookie,
      ask('fall back', key),
      SSE,
    ).response;
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const replayed = parseEvents(replay.body);
    expect(replayed[0].data).toEqual(
      expect.objectContaining({
        model: 'route/backup',
        requestedModel: 'route/primary',
      }),
    );
    expect(replayed.find((event) => event.event === 'usage')?.data).toEqual(
      expect.objectContaining({ credits: 14, model: 'route/backup' }),
    );
    expect(primary.calls).toHaveLength(3);
    expect(backup.calls).toHaveLength(1);
    expect((await counts(user.id)).ledger).toBe(1);
  });

  it('a retry joining a fallback-answered run on the other instance is told the backup answers', async () => {
    const user = await proUser(a);
    const key = randomUUID();
    primary.otherwise = fail(503);
    let release!: () => void;
    backup.otherwise = {
      kind: 'ok',
      words: ['joined', ' from', ' backup'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    const original = post(
      baseA,
      '/v1/chat',
      user.cookie,
      ask('join me', key),
      SSE,
    );
    await original.firstChunk;
    const joined = post(
      baseB,
      '/v1/chat',
      user.cookie,
      ask('join me', key),
      SSE,
    );
    await joined.firstChunk;
    release();
    const [first, second] = await Promise.all([
      original.response,
      joined.response,
    ]);
    expect(second.headers['idempotent-replayed']).toBe('true');
    for (const res of [first, second]) {
      const events = parseEvents(res.body);
      expect(events[0].data).toEqual(
        expect.objectContaining({
          model: 'route/backup',
          requestedModel: 'route/primary',
        }),
      );
      expect(
        events
          .filter((event) => event.event === 'delta')
          .map((event) => event.data.text)
          .join(''),
      ).toBe('joined from backup');
      expect(events.find((event) => event.event === 'usage')?.data).toEqual(
        expect.objectContaining({ credits: 14, model: 'route/backup' }),
      );
    }
    expect(primary.calls).toHaveLength(3);
    expect(backup.calls).toHaveLength(1);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      credits: 14,
      used: 14,
      reserved: 0,
    });
  });

  it('a retry joining before the backup’s first token gets meta.model = the backup and requestedModel', async () => {
    const user = await proUser(a);
    const key = randomUUID();
    primary.otherwise = fail(503);
    backup.otherwise = {
      kind: 'hang',
      ms: 600,
      then: ok('late', ' backup', ' answer'),
    };
    const original = post(
      baseA,
      '/v1/chat',
      user.cookie,
      ask('join early', key),
      SSE,
    );
    // The model failed its 3 calls; the backup is called and has not answered yet.
    await eventually(() => backup.calls.length === 1, 5_000, 5);
    const joined = post(
      baseB,
      '/v1/chat',
      user.cookie,
      ask('join early', key),
      SSE,
    );
    const [first, second] = await Promise.all([
      original.response,
      joined.response,
    ]);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const [originalEvents, joinedEvents] = [first, second].map((res) =>
      parseEvents(res.body),
    );
    expect(originalEvents[0].data).toEqual(
      expect.objectContaining({
        model: 'route/backup',
        requestedModel: 'route/primary',
      }),
    );
    expect(joinedEvents.find((event) => event.event === 'usage')?.data).toEqual(
      expect.objectContaining({ model: 'route/backup' }),
    );
    // The same head as the original's: the model that answers, and the one asked for.
    expect(joinedEvents[0]).toEqual(originalEvents[0]);
    expect(primary.calls).toHaveLength(3);
    expect(backup.calls).toHaveLength(1);
    expect((await counts(user.id)).ledger).toBe(1);
  });

  it('a 400 is not retried (1 call), but the fallback answers', async () => {
    const user = await proUser(a);
    primary.script(fail(400));
    const res = await chat(baseA, user.cookie, ask('bad request')).response;
    expect(res.status).toBe(200);
    expect(res.body).toBe('from the backup');
    expect(primary.calls).toHaveLength(1);
    expect(backup.calls).toHaveLength(1);
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({
        status: 'completed',
        modelId: 'route/backup',
        requestedModelId: 'route/primary',
        credits: 14,
      }),
    ]);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      credits: 14,
      used: 14,
      reserved: 0,
    });
  });

  it('a stream breaking after its first words is the answer: not retried, no fallback, only what was delivered billed once', async () => {
    const user = await proUser(a);
    const key = randomUUID();
    primary.script({ kind: 'break-after', words: ['partial', ' answer'] });
    const res = await chat(baseA, user.cookie, ask('break', key)).response;
    expect(res.status).toBe(200);
    expect(res.body).toBe('partial answer');
    expect(res.complete).toBe(false);
    expect(primary.calls).toHaveLength(1);
    expect(backup.calls).toHaveLength(0);
    // No usage came: the estimated input (1 credit at this size) and the 2 delivered tokens.
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({
        status: 'partial',
        modelId: 'route/primary',
        requestedModelId: null,
        outputTokens: 2,
        credits: 5,
      }),
    ]);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      credits: 5,
      used: 5,
      reserved: 0,
    });
    const replay = await chat(baseA, user.cookie, ask('break', key)).response;
    expect(replay.body).toBe('partial answer');
    expect(replay.complete).toBe(false);
    expect(primary.calls).toHaveLength(1);
  });

  it('a first call silent past PROVIDER_FIRST_TOKEN_TIMEOUT_MS is abandoned and retried: the retry answers, charged once', async () => {
    const user = await proUser(b);
    primary.script({
      kind: 'hang',
      ms: 10_000,
      then: ok('too', ' late'),
    });
    primary.otherwise = ok('after', ' the', ' timeout');
    const started = Date.now();
    const res = await chat(baseB, user.cookie, ask('hang')).response;
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.body).toBe('after the timeout');
    expect(elapsed).toBeGreaterThanOrEqual(FIRST_TOKEN_TIMEOUT_MS);
    expect(elapsed).toBeLessThan(5_000);
    expect(primary.calls).toHaveLength(2);
    // The instance closed the silent call's connection when it gave up on it.
    await eventually(() => primary.calls[0].abandoned, 2_000, 10);
    expect(primary.calls[1].abandoned).toBe(false);
    expect(backup.calls).toHaveLength(0);

    // The same when the head (200) came but no token follows it.
    primary.reset(ok('after', ' the', ' stall'));
    primary.script({ kind: 'stall', ms: 10_000, words: ['too', ' late'] });
    const stalled = await chat(baseB, user.cookie, ask('stall')).response;
    expect(stalled.status).toBe(200);
    expect(stalled.body).toBe('after the stall');
    expect(primary.calls).toHaveLength(2);
    await eventually(() => primary.calls[0].abandoned, 2_000, 10);
    expect(backup.calls).toHaveLength(0);
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({
        status: 'completed',
        modelId: 'route/primary',
        outputTokens: 3,
        credits: 6,
      }),
      expect.objectContaining({
        status: 'completed',
        modelId: 'route/primary',
        outputTokens: 3,
        credits: 6,
      }),
    ]);
    expect(await counts(user.id)).toEqual({
      requests: 2,
      ledger: 2,
      credits: 12,
      used: 12,
      reserved: 0,
    });
  });

  it('10 concurrent chats whose first call fails: 10 answers, 10 ledger entries, used = their credits, nothing reserved; sent again, nothing called or billed', async () => {
    const user = await proUser(a);
    const failed = new Set<string>();
    primary.decide = (call) => {
      if (failed.has(call.lastUserText))
        return ok('re:', ` ${call.lastUserText}`);
      failed.add(call.lastUserText);
      return fail(500);
    };
    const bodies = Array.from({ length: 10 }, (_, index) =>
      ask(`concurrent ${index}`),
    );
    const send = () =>
      Promise.all(
        bodies.map((body) => chat(baseA, user.cookie, body).response),
      );
    const responses = await send();
    expect(responses.map((res) => res.status)).toEqual(Array(10).fill(200));
    expect(responses.map((res) => res.body)).toEqual(
      bodies.map((_, index) => `re: concurrent ${index}`),
    );
    expect(primary.calls).toHaveLength(20);
    expect(backup.calls).toHaveLength(0);
    const settled = await counts(user.id);
    expect(settled).toEqual({
      requests: 10,
      ledger: 10,
      credits: 50,
      used: 50,
      reserved: 0,
    });

    const again = await send();
    expect(again.map((res) => res.status)).toEqual(Array(10).fill(200));
    expect(again.map((res) => res.body)).toEqual(
      responses.map((res) => res.body),
    );
    expect(
      again.every((res) => res.headers['idempotent-replayed'] === 'true'),
    ).toBe(true);
    expect(primary.calls).toHaveLength(20);
    expect(await counts(user.id)).toEqual(settled);
  });

  it('10 concurrent chats all falling back: each reservation grown once, 10 entries at the backup’s price, nothing reserved', async () => {
    const user = await proUser(a);
    primary.otherwise = fail(503);
    backup.decide = (call) => ok('re:', ` ${call.lastUserText}`, '!');
    const bodies = Array.from({ length: 10 }, (_, index) =>
      ask(`fallback ${index}`),
    );
    const responses = await Promise.all(
      bodies.map((body) => chat(baseA, user.cookie, body).response),
    );
    expect(responses.map((res) => res.status)).toEqual(Array(10).fill(200));
    expect(responses.map((res) => res.body)).toEqual(
      bodies.map((_, index) => `re: fallback ${index}!`),
    );
    expect(primary.calls).toHaveLength(30);
    expect(backup.calls).toHaveLength(10);
    const requests = await requestsOf(user.id);
    expect(requests).toHaveLength(10);
    for (const request of requests)
      expect(request).toEqual({
        status: 'completed',
        modelId: 'route/primary',
        answeredModelId: 'route/backup',
        errorCode: null,
        reservedCredits: BACKUP_RESERVATION,
      });
    const ledger = await ledgerOf(user.id);
    expect(ledger).toHaveLength(10);
    for (const entry of ledger)
      expect(entry).toEqual(
        expect.objectContaining({
          modelId: 'route/backup',
          requestedModelId: 'route/primary',
          credits: 14,
        }),
      );
    expect(await counts(user.id)).toEqual({
      requests: 10,
      ledger: 10,
      credits: 140,
      used: 140,
      reserved: 0,
    });
  });

  it('every model failing (500): 502 provider_error after at most PROVIDER_MAX_ATTEMPTS calls, nothing billed, nothing reserved', async () => {
    const user = await proUser(a);
    primary.otherwise = fail(500);
    backup.otherwise = fail(500);
    const res = await a.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send(ask('doomed'));
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('provider_error');
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(JSON.stringify(res.body)).not.toContain('scripted');
    expect(a.config.providers.maxAttempts).toBe(4);
    // The model's 3 calls, then the backup's 1: 4 = PROVIDER_MAX_ATTEMPTS.
    expect(primary.calls).toHaveLength(3);
    expect(backup.calls).toHaveLength(1);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 0,
      credits: 0,
      used: 0,
      reserved: 0,
    });
    expect(await requestsOf(user.id)).toEqual([
      expect.objectContaining({
        status: 'failed',
        errorCode: 'provider_error',
        answeredModelId: null,
      }),
    ]);
  });

  it('a fallback the day’s credits cannot cover is skipped: 502, the backup never called, nothing billed', async () => {
    const user = await proUser(a);
    // Room for the model's reservation (53), not for the backup's 8 more.
    const used = PRO_DAILY_CREDITS - PRIMARY_RESERVATION - 2;
    await query(
      `INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, $2, $3, 0)`,
      [user.id, new Date().toISOString().slice(0, 10), used],
    );
    primary.otherwise = fail(503);
    const res = await a.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send(ask('cannot afford the backup'));
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('provider_error');
    expect(primary.calls).toHaveLength(3);
    expect(backup.calls).toHaveLength(0);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 0,
      credits: 0,
      used,
      reserved: 0,
    });
  });

  it('prompt caching: cached input tokens are reported and billed at the cached price', async () => {
    const user = await proUser(a);
    primary.otherwise = {
      kind: 'ok',
      words: ['cached', ' reply'],
      usage: { inputTokens: 1000, cachedInputTokens: 900 },
    };
    const res = await post(baseA, '/v1/chat', user.cookie, ask('cache me'), SSE)
      .response;
    const events = parseEvents(res.body);
    // The model asked for answered: no requestedModel in the head.
    expect(events[0]).toEqual({
      event: 'meta',
      data: {
        conversationId: res.headers['x-conversation-id'],
        requestId: expect.any(String),
        model: 'route/primary',
      },
    });
    const usage = events.find((event) => event.event === 'usage');
    // 2 + ceil((100 x 10 + 900 x 1) / 1000) + 2 = 6 (at the full input price it would be 14).
    expect(usage?.data).toEqual({
      inputTokens: 1000,
      cachedInputTokens: 900,
      outputTokens: 2,
      credits: 6,
      model: 'route/primary',
    });
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({
        modelId: 'route/primary',
        inputTokens: 1000,
        cachedInputTokens: 900,
        credits: 6,
      }),
    ]);
    expect(await counts(user.id)).toEqual(
      expect.objectContaining({ used: 6, reserved: 0 }),
    );
  });

  it('a stop during a silent first call ends the run as stopped: not retried, no fallback, nothing billed', async () => {
    const user = await proUser(a);
    const key = randomUUID();
    primary.otherwise = { kind: 'hang', ms: 10_000, then: ok('too', ' late') };
    const running = post(baseA, '/v1/chat', user.cookie, ask('stop', key), SSE);
    await eventually(() => primary.calls.length === 1, 5_000, 5);
    const stop = await a.http
      .post('/v1/chat/stop')
      .set('Cookie', user.cookie)
      .send({ idempotencyKey: key })
      .expect(200);
    expect(stop.body.status).toBe('stopped');
    const res = await running.response;
    expect(res.status).toBe(200);
    expect(parseEvents(res.body).at(-1)).toEqual({
      event: 'done',
      data: { status: 'stopped' },
    });
    await eventually(() => primary.calls[0].abandoned, 2_000, 10);
    expect(primary.calls).toHaveLength(1);
    expect(backup.calls).toHaveLength(0);
    expect(await requestsOf(user.id)).toEqual([
      expect.objectContaining({ status: 'stopped', errorCode: null }),
    ]);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 0,
      credits: 0,
      used: 0,
      reserved: 0,
    });
  });

  it('a stop while the router waits to retry (503, Retry-After) ends the run as stopped (ADR 0034), not failed', async () => {
    // An instance that waits as long as an upstream asks (up to 10 s) before calling it again.
    const patient = await bootTestApp({
      ...shared,
      PROVIDER_RETRY_MAX_MS: '10000',
    });
    try {
      const user = await proUser(patient);
      const key = randomUUID();
      primary.otherwise = fail(503, { 'Retry-After': '5' });
      const running = post(
        await listen(patient),
        '/v1/chat',
        user.cookie,
        ask('stop me', key),
        SSE,
      );
      await eventually(() => primary.calls.length === 1, 5_000, 5);
      // The 503 came back: the router now waits its 5 s before the next call.
      await new Promise((done) => setTimeout(done, 150));
      const stop = await patient.http
        .post('/v1/chat/stop')
        .set('Cookie', user.cookie)
        .send({ idempotencyKey: key })
        .expect(200);
      const res = await running.response;
      expect(primary.calls).toHaveLength(1);
      expect(backup.calls).toHaveLength(0);
      expect(await counts(user.id)).toEqual({
        requests: 1,
        ledger: 0,
        credits: 0,
        used: 0,
        reserved: 0,
      });
      expect(await requestsOf(user.id)).toEqual([
        expect.objectContaining({ status: 'stopped', errorCode: null }),
      ]);
      expect(stop.body.status).toBe('stopped');
      expect(res.status).toBe(200);
      expect(parseEvents(res.body).at(-1)).toEqual({
        event: 'done',
        data: { status: 'stopped' },
      });
    } finally {
      await patient.close();
    }
  });

  it('a key rests only for its Retry-After: while the only key rests its model is not called (502), then it is used again', async () => {
    const user = await proUser(a);
    const direct = (content: string) => ({
      ...ask(content),
      model: 'route/backup',
    });
    backup.script(fail(429, { 'Retry-After': '2' }));
    const limited = await a.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send(direct('limited'));
    expect(limited.status).toBe(502);
    expect(limited.body.code).toBe('provider_error');
    expect(backup.calls).toHaveLength(1);
    const resting = await a.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send(direct('resting'));
    expect(resting.status).toBe(502);
    expect(resting.body.code).toBe('provider_error');
    expect(backup.calls).toHaveLength(1);
    const cooldowns = a.app.get(KeyCooldowns);
    await eventually(
      () => cooldowns.all().every((cooldown) => cooldown.endpoint !== 'backup'),
      3_000,
      25,
    );
    const again = await chat(baseA, user.cookie, direct('again')).response;
    expect(again.status).toBe(200);
    expect(again.body).toBe('from the backup');
    expect(backup.calls.map((call) => call.apiKey)).toEqual([
      'backup-key',
      'backup-key',
    ]);
    expect(primary.calls).toHaveLength(0);
    expect(await counts(user.id)).toEqual({
      requests: 3,
      ledger: 1,
      credits: 14,
      used: 14,
      reserved: 0,
    });
  });

  // Last: it leaves every key of the primary endpoint resting for PROVIDER_KEY_COOLDOWN_MS.
  it('a 401 rests the key for PROVIDER_KEY_COOLDOWN_MS; with every key resting the model is skipped and the fallback answers', async () => {
    const user = await proUser(a);
    const before = await scrape();
    primary.otherwise = fail(401);
    const first = await chat(baseA, user.cookie, ask('refused key')).response;
    expect(first.status).toBe(200);
    expect(first.body).toBe('from the backup');
    // Each key not resting yet (key-a may still rest after the 429 above) is refused once, then none is left.
    const refused = primary.calls.map((call) => call.key);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(new Set(refused).size).toBe(refused.length);
    expect(refused.every((k) => k === 'key-a' || k === 'key-b')).toBe(true);
    const resting = a.app
      .get(KeyCooldowns)
      .all()
      .filter((cooldown) => cooldown.endpoint === 'primary');
    expect(resting).toHaveLength(2);
    const longest = Math.max(...resting.map((cooldown) => cooldown.until));
    const lastCall = primary.calls[primary.calls.length - 1].at;
    expect(longest - lastCall).toBeGreaterThan(59_000);
    expect(longest - lastCall).toBeLessThan(61_000);

    // Every key rests: the model is not called at all, the fallback answers at once.
    const second = await chat(baseA, user.cookie, ask('no key left')).response;
    expect(second.status).toBe(200);
    expect(second.body).toBe('from the backup');
    expect(primary.calls).toHaveLength(refused.length);
    expect(backup.calls).toHaveLength(2);
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({
        modelId: 'route/backup',
        requestedModelId: 'route/primary',
        credits: 14,
      }),
      expect.objectContaining({
        modelId: 'route/backup',
        requestedModelId: 'route/primary',
        credits: 14,
      }),
    ]);
    expect(await counts(user.id)).toEqual({
      requests: 2,
      ledger: 2,
      credits: 28,
      used: 28,
      reserved: 0,
    });

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(
      moved('chat_provider_errors_total', {
        endpoint: 'primary',
        model: 'route/primary',
        reason: 'http_auth',
      }),
    ).toBe(refused.length);
    expect(
      moved('chat_provider_key_cooldowns_total', { endpoint: 'primary' }),
    ).toBe(refused.length);
    expect(
      moved('chat_provider_errors_total', {
        endpoint: 'primary',
        model: 'route/primary',
        reason: 'no_key',
      }),
    ).toBe(2);
    expect(
      moved('chat_provider_fallbacks_total', {
        from_model: 'route/primary',
        to_model: 'route/backup',
      }),
    ).toBe(2);
  });
});
