/** What the service needs around it: a scratch database, a Redis key prefix, a catalog, users with sessions. */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { ChatTarget, isObject } from './protocol';
import { REPO } from './children';
import { StreamShape, upstreamName } from './tokens';

export interface BenchModel {
  id: string;
  shape: StreamShape;
}

/** 50 tokens 10 per second (scenarios b-e) and 3 tokens at once (scenario a). */
export const STREAM_MODEL: BenchModel = {
  id: 'openai/bench-stream',
  shape: { tokens: 50, intervalMs: 100 },
};
export const SHORT_MODEL: BenchModel = {
  id: 'openai/bench-short',
  shape: { tokens: 3, intervalMs: 0 },
};

/**
 * config/catalog.json plus the bench models (1 credit per request, nothing per token, at most 64 output
 * tokens) on every plan, written to `file` for CATALOG_FILE. `checkout`: whose config/catalog.json (another
 * build's in bench:builds).
 */
export function writeBenchCatalog(file: string, checkout: string = REPO): void {
  const catalog: unknown = JSON.parse(
    readFileSync(join(checkout, 'config', 'catalog.json'), 'utf8'),
  );
  if (
    !isObject(catalog) ||
    !Array.isArray(catalog.models) ||
    !Array.isArray(catalog.plans)
  )
    throw new Error('config/catalog.json: unexpected shape');
  for (const model of [STREAM_MODEL, SHORT_MODEL]) {
    catalog.models.push({
      id: model.id,
      name: `Bench ${model.shape.tokens}x${model.shape.intervalMs}`,
      provider: 'openai',
      upstreamModel: upstreamName(model.shape),
      pricing: { perRequest: 1, per1kInputTokens: 0, per1kOutputTokens: 0 },
      maxOutputTokens: 64,
    });
    for (const plan of catalog.plans) {
      if (isObject(plan) && Array.isArray(plan.models))
        plan.models.push(model.id);
    }
  }
  writeFileSync(file, `${JSON.stringify(catalog, null, 2)}\n`);
}

export async function withPg<T>(
  url: string,
  work: (pg: Client) => Promise<T>,
): Promise<T> {
  const pg = new Client({ connectionString: url });
  await pg.connect();
  try {
    return await work(pg);
  } finally {
    await pg.end();
  }
}

export async function postgresVersion(url: string): Promise<string> {
  return withPg(
    url,
    async (pg) =>
      `PostgreSQL ${(await pg.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version}`,
  );
}

/**
 * `count` enterprise users, each with a live session, written straight into the service's tables (no
 * bcrypt, no register round trip). Returns the `sid=<token>` cookie of each; the database keeps only the
 * token's SHA-256 hex, as SessionsService does.
 */
export async function createUsers(
  databaseUrl: string,
  count: number,
  tag: string,
  /** Session tokens to use (the same users in a second database); new random ones by default. */
  tokens: string[] = Array.from({ length: count }, () =>
    randomBytes(32).toString('base64url'),
  ),
): Promise<string[]> {
  const hashes = tokens.map((token) =>
    createHash('sha256').update(token, 'utf8').digest('hex'),
  );
  // Same length for every user: GET /v1/auth/me answers the same number of bytes whoever asks.
  const emails = tokens.map(
    (_, index) => `bench-${tag}-${String(index).padStart(6, '0')}@example.com`,
  );
  await withPg(databaseUrl, async (pg) => {
    await pg.query('BEGIN');
    await pg.query(
      `INSERT INTO "User" (id, email, "planCode", "updatedAt")
       SELECT gen_random_uuid(), email, 'enterprise', now() FROM unnest($1::text[]) AS email`,
      [emails],
    );
    await pg.query(
      `INSERT INTO "Session" (id, "userId", "tokenHash", "expiresAt")
       SELECT gen_random_uuid(), u.id, s.hash, now() + interval '2 days'
       FROM unnest($1::text[], $2::text[]) AS s(email, hash) JOIN "User" u ON u.email = s.email`,
      [emails, hashes],
    );
    await pg.query('COMMIT');
  });
  return tokens.map((token) => `sid=${token}`);
}

/** Deletes every key under the prefix; returns how many. */
export async function deleteRedisKeys(
  url: string,
  prefix: string,
): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    let deleted = 0;
    do {
      const [nextCursor, keys] = await redis.scan(
        cursor,
        'MATCH',
        `${prefix}*`,
        'COUNT',
        1000,
      );
      cursor = nextCursor;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** Rows the runs left: how the service settled what it accepted. */
export async function databaseSummary(databaseUrl: string): Promise<{
  byStatus: Record<string, number>;
  reservedLeft: number;
  ledgerEntries: number;
}> {
  return withPg(databaseUrl, async (pg) => {
    const statuses = await pg.query<{ status: string; count: number }>(
      `SELECT status::text AS status, count(*)::int AS count FROM "ChatRequest" GROUP BY status ORDER BY status`,
    );
    const usage = await pg.query<{ reserved: number }>(
      `SELECT COALESCE(sum(reserved), 0)::int AS reserved FROM "DailyUsage"`,
    );
    const ledger = await pg.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM "LedgerEntry"`,
    );
    return {
      byStatus: Object.fromEntries(
        statuses.rows.map((row) => [row.status, row.count]),
      ),
      reservedLeft: usage.rows[0].reserved,
      ledgerEntries: ledger.rows[0].count,
    };
  });
}

/**
 * What every bench gives the service under test (production mode, fresh secrets, the mock as OpenAI, info
 * logs) besides its own database, Redis prefix, catalog and storage.
 */
export function serviceEnvironment(
  mockUrl: string,
  redisUrl: string,
): Record<string, string> {
  return {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    REDIS_URL: redisUrl,
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    PASSWORD_PEPPER: randomBytes(32).toString('base64url'),
    OPENAI_API_KEY: 'bench',
    OPENAI_BASE_URL: `${mockUrl}/v1`,
    LOG_LEVEL: 'info',
  };
}

/** Chat requests of `model` to `baseUrl`, each with its own idempotency key under `keyPrefix`. */
export function benchChatTarget(options: {
  baseUrl: string;
  model: BenchModel;
  cookies: string[];
  keyPrefix: string;
  deadlineMs: number;
}): ChatTarget {
  return {
    baseUrl: options.baseUrl,
    model: options.model.id,
    tokens: options.model.shape.tokens,
    intervalMs: options.model.shape.intervalMs,
    cookies: options.cookies,
    keyPrefix: `${options.keyPrefix}-${randomBytes(4).toString('hex')}`,
    deadlineMs: options.deadlineMs,
    fastRefusalMs: 1_000,
  };
}

/** The body of a GET that must answer 200 (a fixture: its byte length is what the rate jobs expect). */
export async function fetchText(url: string, cookie?: string): Promise<string> {
  const res = await fetch(url, {
    headers: cookie ? { cookie } : {},
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}
