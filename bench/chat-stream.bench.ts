// Must stay the first import: lets ts-node load the generated Prisma client ('./x.js' -> './x.ts').
import './support/ts-js-resolver';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { arch, cpus, platform, release, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { NestExpressApplication } from '@nestjs/platform-express';
import Redis from 'ioredis';
import { Client } from 'pg';
import { createScratchDatabase, ScratchDatabase } from '../scripts/lib/scratch-database';
import { createApp } from '../src/app.factory';
import { createRootLogger } from '../src/common/logging/logger';
import { loadConfig } from '../src/config/load-config';
import { applyMigrations } from '../src/infra/prisma/migrator';
import { FakeOpenAi, specMessage, UpstreamRecord } from './support/fake-openai';
import { cookieFrom, postJson, TimedResponse } from './support/http-client';
import { collectGarbage, mib, MemoryReport, MemorySampler, ms, summarize, Summary } from './support/stats';

/** Sizes of each bench; together they run in well under two minutes on a 2-CPU machine. */
const PLAN = {
  warmup: { requests: 10, tokens: 5, delayMs: 2 },
  ttfb: { requests: 200, tokens: 3, delayMs: 2 },
  relay: { requests: 20, tokens: 50, delayMs: 10 },
  concurrency: { levels: [50, 200], roundsPerWorker: 2, tokens: 50, delayMs: 20 },
  replay: { requests: 500, tokens: 20, delayMs: 0 },
  requestsPerUser: 20,
};

const COMMAND = 'npm run bench  (= ts-node --transpile-only bench/chat-stream.bench.ts)';
const MODEL = 'openai/gpt-4o-mini';
const PASSWORD = 'bench password, long enough';
const RESULTS_FILE = resolve(__dirname, 'RESULTS.md');
const MIGRATIONS_DIR = resolve(__dirname, '..', 'prisma', 'migrations');
const RUN_TAG = randomBytes(4).toString('hex');

interface BenchUser {
  id: string;
  cookie: string;
}

interface Harness {
  base: string;
  agent: Agent;
  fake: FakeOpenAi;
  users: BenchUser[];
  nextUser: () => BenchUser;
}

interface StreamSpecInput {
  tokens: number;
  delayMs: number;
}

/** One chat request as the bench saw it; the timings are NaN when the request failed. */
interface StreamResult {
  ok: boolean;
  problem?: string;
  key: string;
  body: unknown;
  user: BenchUser;
  response?: TimedResponse;
  /** Client's first body byte minus the fake's first token write. */
  addedTtfb: number;
  /** Client's first body byte minus the moment the request was sent. */
  clientTtfb: number;
  /** The fake received the app's call minus the moment the client sent its request: the app's work before the model. */
  preUpstream: number;
  /** Client saw the body end minus the fake ended its response: settlement before the app ends the stream. */
  tail: number;
  /** Client sent to body ended. */
  total: number;
  /** Per token: the client received its last byte minus the fake wrote it. */
  relay: number[];
}

let sequence = 0;

async function streamOnce(h: Harness, spec: StreamSpecInput, user: BenchUser = h.nextUser()): Promise<StreamResult> {
  sequence += 1;
  const id = `r${sequence}`;
  const key = `bench-${RUN_TAG}-${id}`;
  const body = { model: MODEL, idempotencyKey: key, messages: [{ role: 'user', content: `Say something. ${specMessage({ id, ...spec })}` }] };
  const failed = (problem: string, response?: TimedResponse): StreamResult => ({
    ok: false,
    problem,
    key,
    body,
    user,
    response,
    addedTtfb: Number.NaN,
    clientTtfb: Number.NaN,
    preUpstream: Number.NaN,
    tail: Number.NaN,
    total: Number.NaN,
    relay: [],
  });
  let response: TimedResponse;
  try {
    response = await postJson(h.base, '/v1/chat', body, { agent: h.agent, cookie: user.cookie });
  } catch (error) {
    return failed(`request error: ${error instanceof Error ? error.message : String(error)}`);
  }
  const upstream = h.fake.records.get(id);
  h.fake.records.delete(id);
  if (response.status !== 200) return failed(`status ${response.status}: ${response.body.slice(0, 200)}`, response);
  if (!upstream || upstream.tokens.length !== spec.tokens) return failed('the fake model did not stream every token', response);
  const expected = upstream.tokens.join('');
  if (!response.complete || response.body !== expected) return failed(`incomplete or wrong body (${response.body.length}/${expected.length} chars)`, response);
  const first = response.chunks[0];
  return {
    ok: true,
    key,
    body,
    user,
    response,
    addedTtfb: first.at - upstream.tokenWrittenAt[0],
    clientTtfb: first.at - response.sentAt,
    preUpstream: upstream.receivedAt - response.sentAt,
    tail: response.endedAt - (upstream.endedAt ?? Number.NaN),
    total: response.endedAt - response.sentAt,
    relay: relayLatencies(response, upstream),
  };
}

/** For each token, the arrival time of the body piece holding its last character minus the fake's write time. */
function relayLatencies(response: TimedResponse, upstream: UpstreamRecord): number[] {
  const latencies: number[] = [];
  let chunk = 0;
  let receivedBefore = 0;
  let tokenEnd = 0;
  for (const [index, token] of upstream.tokens.entries()) {
    tokenEnd += token.length;
    while (chunk < response.chunks.length && receivedBefore + response.chunks[chunk].text.length < tokenEnd) {
      receivedBefore += response.chunks[chunk].text.length;
      chunk += 1;
    }
    if (chunk >= response.chunks.length) break;
    latencies.push(response.chunks[chunk].at - upstream.tokenWrittenAt[index]);
  }
  return latencies;
}

interface SequentialResult {
  results: StreamResult[];
  wallMs: number;
  /** Process CPU time (user + system) over the run. */
  cpuMs: number;
}

async function sequential(h: Harness, requests: number, spec: StreamSpecInput): Promise<SequentialResult> {
  const results: StreamResult[] = [];
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < requests; index++) results.push(await streamOnce(h, spec));
  const used = process.cpuUsage(cpu);
  return { results, wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

interface ConcurrencyResult {
  concurrency: number;
  requests: number;
  results: StreamResult[];
  wallMs: number;
  memory: MemoryReport;
  /** After the level and a full garbage collection: what the level left referenced. */
  afterGc: NodeJS.MemoryUsage;
}

/** `concurrency` workers, each streaming `roundsPerWorker` answers back to back (a closed loop). */
async function concurrencyLevel(h: Harness, concurrency: number): Promise<ConcurrencyResult> {
  const { roundsPerWorker, tokens, delayMs } = PLAN.concurrency;
  const requests = concurrency * roundsPerWorker;
  const results: StreamResult[] = [];
  const sampler = new MemorySampler(50);
  const started = performance.now();
  let issued = 0;
  const worker = async () => {
    while (issued < requests) {
      issued += 1;
      results.push(await streamOnce(h, { tokens, delayMs }));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;
  const memory = sampler.stop();
  return { concurrency, requests, results, wallMs, memory, afterGc: collectGarbage() };
}

interface ReplayResult {
  requests: number;
  ok: number;
  problems: string[];
  wallMs: number;
  latency: Summary;
  ttfb: Summary;
}

/** Retries of one finished key, one after another: each must be a replay of the stored answer. */
async function replays(h: Harness): Promise<ReplayResult> {
  const original = await streamOnce(h, { tokens: PLAN.replay.tokens, delayMs: PLAN.replay.delayMs });
  if (!original.ok || !original.response) throw new Error(`the request to replay failed: ${original.problem}`);
  const latencies: number[] = [];
  const ttfbs: number[] = [];
  const problems: string[] = [];
  let ok = 0;
  const started = performance.now();
  for (let index = 0; index < PLAN.replay.requests; index++) {
    const res = await postJson(h.base, '/v1/chat', original.body, { agent: h.agent, cookie: original.user.cookie });
    const replayed = res.headers['idempotent-replayed'] === 'true';
    if (res.status === 200 && replayed && res.complete && res.body === original.response.body) {
      ok += 1;
      latencies.push(res.endedAt - res.sentAt);
      if (res.chunks.length > 0) ttfbs.push(res.chunks[0].at - res.sentAt);
    } else if (problems.length < 5) {
      problems.push(`status ${res.status}, replayed=${replayed}, complete=${res.complete}, ${res.body.length} chars`);
    }
  }
  return { requests: PLAN.replay.requests, ok, problems, wallMs: performance.now() - started, latency: summarize(latencies), ttfb: summarize(ttfbs) };
}

async function registerUsers(base: string, agent: Agent, count: number, databaseUrl: string): Promise<BenchUser[]> {
  const users: BenchUser[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      const email = `bench-${RUN_TAG}-${next}@example.com`;
      const res = await postJson(base, '/v1/auth/register', { email, password: PASSWORD }, { agent });
      if (res.status !== 201) throw new Error(`register answered ${res.status}: ${res.body.slice(0, 300)}`);
      const parsed: unknown = JSON.parse(res.body);
      const id = typeof parsed === 'object' && parsed !== null && 'id' in parsed && typeof parsed.id === 'string' ? parsed.id : undefined;
      if (!id) throw new Error('register answered without a user id');
      users.push({ id, cookie: cookieFrom(res.headers, 'sid') });
    }
  };
  // bcrypt runs on libuv's 4 worker threads: more parallel registrations only queue.
  await Promise.all(Array.from({ length: 4 }, worker));
  // Free accounts have 50 credits a day (about two gpt-4o-mini reservations); enterprise has 100000.
  await withPg(databaseUrl, async (pg) => {
    for (const user of users) await pg.query(`UPDATE "User" SET "planCode" = 'enterprise' WHERE id = $1`, [user.id]);
  });
  return users;
}

async function withPg<T>(url: string, work: (pg: Client) => Promise<T>): Promise<T> {
  const pg = new Client({ connectionString: url });
  await pg.connect();
  try {
    return await work(pg);
  } finally {
    await pg.end();
  }
}

interface DatabaseCheck {
  requestsByStatus: Record<string, number>;
  reservedLeft: number;
  used: number;
  ledgerEntries: number;
}

/** After the run: every request settled, no reservation left behind, one ledger entry per billed request. */
async function checkDatabase(url: string): Promise<DatabaseCheck> {
  return withPg(url, async (pg) => {
    const statuses = await pg.query<{ status: string; count: number }>(`SELECT status::text AS status, count(*)::int AS count FROM "ChatRequest" GROUP BY status`);
    const usage = await pg.query<{ reserved: number; used: number }>(`SELECT COALESCE(sum(reserved), 0)::int AS reserved, COALESCE(sum(used), 0)::int AS used FROM "DailyUsage"`);
    const ledger = await pg.query<{ count: number }>(`SELECT count(*)::int AS count FROM "LedgerEntry"`);
    return {
      requestsByStatus: Object.fromEntries(statuses.rows.map((row) => [row.status, row.count])),
      reservedLeft: usage.rows[0].reserved,
      used: usage.rows[0].used,
      ledgerEntries: ledger.rows[0].count,
    };
  });
}

/** True when something answers PING with +PONG at the URL's host and port within the timeout. */
function redisAnswers(url: string, timeoutMs = 500): Promise<boolean> {
  const parsed = new URL(url);
  return new Promise((resolvePing) => {
    const socket = new Socket();
    let done = false;
    const finish = (answered: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolvePing(answered);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('data', (data: Buffer) => finish(data.toString('utf8').startsWith('+PONG')));
    socket.connect(Number(parsed.port || 6379), parsed.hostname || '127.0.0.1', () => socket.write('PING\r\n'));
  });
}

async function deleteRedisKeys(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    let deleted = 0;
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = nextCursor;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

interface LogSink {
  stream: Writable;
  lines: string[];
}

function logSink(): LogSink {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

function logMessages(lines: string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of lines) {
    let label = line.slice(0, 160);
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed === 'object' && parsed !== null && 'msg' in parsed) {
        const level = 'level' in parsed ? String(parsed.level) : '?';
        label = `${level}: ${String(parsed.msg)}`;
      }
    } catch {
      // not JSON: keep the raw start of the line
    }
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts.entries()].map(([label, count]) => `${count} × ${label}`);
}

function okCount(results: StreamResult[]): number {
  return results.filter((result) => result.ok).length;
}

function problemsOf(results: StreamResult[]): string[] {
  const counts = new Map<string, number>();
  for (const result of results) if (!result.ok) counts.set(result.problem ?? '?', (counts.get(result.problem ?? '?') ?? 0) + 1);
  return [...counts.entries()].map(([problem, count]) => `${count} × ${problem}`);
}

const pick = (results: StreamResult[], metric: (result: StreamResult) => number): Summary => summarize(results.filter((result) => result.ok).map(metric));
const relayOf = (results: StreamResult[]): Summary => summarize(results.filter((result) => result.ok).flatMap((result) => result.relay));
const triple = (summary: Summary): string => `${ms(summary.p50)} / ${ms(summary.p95)} / ${ms(summary.p99)}`;

interface Report {
  startedAt: Date;
  redis: { used: boolean; url?: string; reason: string };
  postgres: string;
  users: number;
  durationMs: number;
  ttfb: SequentialResult;
  relay: SequentialResult;
  baseline: NodeJS.MemoryUsage;
  levels: ConcurrencyResult[];
  replay: ReplayResult;
  database: DatabaseCheck;
  logs: string[];
}

function renderResults(report: Report): string {
  const cpuList = cpus();
  const cpuModel = cpuList[0]?.model.trim() ?? 'unknown';
  const { ttfb, relay, baseline, levels, replay } = report;
  const c = PLAN.concurrency;
  const lines: string[] = [];
  lines.push('# Chat streaming bench: results', '');
  lines.push('Written by `bench/chat-stream.bench.ts` (see bench/README.md); every run overwrites this file. Numbers are informational, never asserted.', '');
  lines.push(`- Date: ${report.startedAt.toISOString()}`);
  lines.push(`- Machine: ${cpuList.length} × ${cpuModel}, ${mib(totalmem())} RAM, ${platform()} ${release()} ${arch()}`);
  lines.push(`- Node: ${process.version}; PostgreSQL: ${report.postgres}`);
  lines.push(`- Command: \`${COMMAND}\``);
  lines.push(`- Redis: ${report.redis.used ? `used (${report.redis.url}, random REDIS_KEY_PREFIX)` : 'not used (in-process live streams and rate limits)'}: ${report.redis.reason}`);
  lines.push(`- Setup: app (createApp, LOG_LEVEL=warn), bench client (node:http, keep-alive agent) and fake OpenAI server all in **one Node process** on 127.0.0.1; ${report.users} enterprise users, requests spread round-robin; model \`${MODEL}\`. Total run ${(report.durationMs / 1000).toFixed(1)} s.`);
  lines.push('- Times are `performance.now()` of that one process, so fake-side and client-side stamps share a clock; client, app and fake also share one event loop and CPU budget.', '');

  lines.push('## Latency', '');
  lines.push('| Bench | Definition | n | p50 / p95 / p99 | max |');
  lines.push('|---|---|---|---|---|');
  const row = (name: string, definition: string, summary: Summary) => lines.push(`| ${name} | ${definition} | ${summary.count} | ${triple(summary)} | ${ms(summary.max)} |`);
  const t = PLAN.ttfb;
  row('1. Added TTFB', `client's first body byte − fake wrote its first token (${t.requests} sequential requests, ${t.tokens} tokens ${t.delayMs} ms apart)`, pick(ttfb.results, (r) => r.addedTtfb));
  row('1a. Client TTFB', 'client\'s first body byte − client sent the request (same requests)', pick(ttfb.results, (r) => r.clientTtfb));
  row('1b. Pre-upstream', 'fake received the app\'s model call − client sent the request (session, plan, claim transaction)', pick(ttfb.results, (r) => r.preUpstream));
  row('1c. Tail', 'client saw the body end − fake ended its response (settlement before the stream ends)', pick(ttfb.results, (r) => r.tail));
  const rl = PLAN.relay;
  row('2. Relay per token', `per token: client received its last byte − fake wrote it (${rl.requests} sequential requests × ${rl.tokens} tokens ${rl.delayMs} ms apart)`, relayOf(relay.results));
  lines.push('');
  lines.push(
    `OK: bench 1 ${okCount(ttfb.results)}/${ttfb.results.length} in ${(ttfb.wallMs / 1000).toFixed(1)} s (${(ttfb.results.length / (ttfb.wallMs / 1000)).toFixed(0)} req/s sequential, process CPU ${ms(ttfb.cpuMs / ttfb.results.length)} per request); ` +
      `bench 2 ${okCount(relay.results)}/${relay.results.length} (process CPU ${ms(relay.cpuMs / relay.results.length)} per ${PLAN.relay.tokens}-token request).`,
    '',
  );

  lines.push('## Concurrency', '');
  lines.push(`C streams in flight (closed loop: C workers × ${c.roundsPerWorker} requests each), every stream ${c.tokens} tokens ${c.delayMs} ms apart (≥ ${(c.tokens - 1) * c.delayMs} ms of upstream time). Memory is \`process.memoryUsage()\` sampled every 50 ms of the **single process holding app + client + fake** (and ts-node); a full GC before the first level left ${mib(baseline.heapUsed)} of heap (RSS ${mib(baseline.rss)}).`, '');
  lines.push(`| Metric | ${levels.map((level) => `C = ${level.concurrency}`).join(' | ')} |`);
  lines.push(`|---|${levels.map(() => '---').join('|')}|`);
  const levelRow = (name: string, value: (level: ConcurrencyResult) => string) => lines.push(`| ${name} | ${levels.map(value).join(' | ')} |`);
  levelRow('Requests', (l) => String(l.requests));
  levelRow('All 200 OK (status 200, complete, every token)?', (l) => (okCount(l.results) === l.requests ? `yes (${l.requests}/${l.requests})` : `**no: ${okCount(l.results)}/${l.requests}**`));
  levelRow('Wall time', (l) => ms(l.wallMs));
  levelRow('Requests/s (completed streams ÷ wall time)', (l) => (okCount(l.results) / (l.wallMs / 1000)).toFixed(1));
  levelRow('Relay per token p50 / p95 / p99', (l) => triple(relayOf(l.results)));
  levelRow('Relay per token max', (l) => ms(relayOf(l.results).max));
  levelRow('Added TTFB p50 / p99', (l) => { const s = pick(l.results, (r) => r.addedTtfb); return `${ms(s.p50)} / ${ms(s.p99)}`; });
  levelRow('Pre-upstream p50 / p99', (l) => { const s = pick(l.results, (r) => r.preUpstream); return `${ms(s.p50)} / ${ms(s.p99)}`; });
  levelRow('Tail (settlement) p50 / p99', (l) => { const s = pick(l.results, (r) => r.tail); return `${ms(s.p50)} / ${ms(s.p99)}`; });
  levelRow('Request duration p50 / p99', (l) => { const s = pick(l.results, (r) => r.total); return `${ms(s.p50)} / ${ms(s.p99)}`; });
  levelRow('RSS before → peak', (l) => `${mib(l.memory.before.rss)} → ${mib(l.memory.peakRss)}`);
  levelRow('Heap used before → peak', (l) => `${mib(l.memory.before.heapUsed)} → ${mib(l.memory.peakHeapUsed)}`);
  levelRow('Heap used / RSS after the level and a forced full GC', (l) => `${mib(l.afterGc.heapUsed)} / ${mib(l.afterGc.rss)}`);
  levelRow('Process CPU (user + sys) ÷ wall time', (l) => `${((100 * l.memory.cpuMs) / l.wallMs).toFixed(0)} %`);
  levelRow('Process CPU per stream', (l) => ms(l.memory.cpuMs / l.requests));
  levelRow('Event-loop delay p99 / max', (l) => `${ms(l.memory.loopDelayP99)} / ${ms(l.memory.loopDelayMax)}`);
  lines.push('');
  for (const level of levels) {
    const problems = problemsOf(level.results);
    if (problems.length > 0) lines.push(`Failures at C = ${level.concurrency}: ${problems.join('; ')}`, '');
  }

  lines.push('## Replay', '');
  lines.push(`${replay.requests} sequential retries of one finished key (same body, same user): each must answer 200 with \`Idempotent-Replayed: true\` and the stored ${PLAN.replay.tokens}-token answer.`, '');
  lines.push('| Metric | Value |', '|---|---|');
  lines.push(`| OK | ${replay.ok}/${replay.requests} |`);
  lines.push(`| Requests/s (sequential, one connection at a time) | ${(replay.requests / (replay.wallMs / 1000)).toFixed(0)} |`);
  lines.push(`| Latency p50 / p95 / p99 (sent → body ended) | ${triple(replay.latency)} |`);
  lines.push(`| First body byte p50 (sent → first byte) | ${ms(replay.ttfb.p50)} |`);
  if (replay.problems.length > 0) lines.push(`| Problems | ${replay.problems.join('; ')} |`);
  lines.push('');

  lines.push('## After the run', '');
  const statuses = Object.entries(report.database.requestsByStatus).map(([status, count]) => `${status} ${count}`).join(', ');
  lines.push(`- ChatRequest rows by status: ${statuses || 'none'}; credits still reserved: ${report.database.reservedLeft}; credits used: ${report.database.used}; ledger entries: ${report.database.ledgerEntries}.`);
  lines.push(`- App log lines at warn or above: ${report.logs.length === 0 ? 'none' : report.logs.join('; ')}.`);
  lines.push('');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const started = performance.now();
  const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  let redis: Report['redis'];
  if (process.env.BENCH_REDIS_URL) redis = { used: true, url: process.env.BENCH_REDIS_URL, reason: 'BENCH_REDIS_URL given' };
  else if (await redisAnswers('redis://127.0.0.1:6379')) redis = { used: true, url: 'redis://127.0.0.1:6379', reason: 'default redis://127.0.0.1:6379 answered PING' };
  else redis = { used: false, reason: 'BENCH_REDIS_URL not set and redis://127.0.0.1:6379 did not answer PING' };
  const redisPrefix = `bench:${RUN_TAG}:`;

  let database: ScratchDatabase | undefined;
  let fake: FakeOpenAi | undefined;
  let app: NestExpressApplication | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const logs = logSink();
  try {
    log(`creating scratch database on ${new URL(serverUrl).host}`);
    database = await createScratchDatabase(serverUrl, 'chat_bench');
    await applyMigrations({ databaseUrl: database.url, migrationsDir: MIGRATIONS_DIR });
    const postgres = await withPg(database.url, async (pg) => (await pg.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0].v);
    fake = await new FakeOpenAi().start();

    const limit = '100000/60';
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      REDIS_URL: redis.used ? redis.url : undefined,
      REDIS_KEY_PREFIX: redisPrefix,
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: fake.baseUrl,
      RATE_LIMIT_LOGIN_IP: limit,
      RATE_LIMIT_LOGIN_EMAIL: limit,
      RATE_LIMIT_REGISTER_IP: limit,
      RATE_LIMIT_FORGOT_IP: limit,
      RATE_LIMIT_FORGOT_EMAIL: limit,
      RATE_LIMIT_RESET_IP: limit,
    });
    app = await createApp(config, createRootLogger(config.log.level, logs.stream));
    await app.init();
    await app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    log(`app listening on ${base}; fake model on ${fake.baseUrl}; redis ${redis.used ? redis.url : 'off'}`);

    const c = PLAN.concurrency;
    const totalStreams = PLAN.warmup.requests + PLAN.ttfb.requests + PLAN.relay.requests + c.levels.reduce((sum, level) => sum + level * c.roundsPerWorker, 0) + 1;
    const userCount = Math.ceil(totalStreams / PLAN.requestsPerUser);
    const users = await registerUsers(base, agent, userCount, database.url);
    let turn = 0;
    const h: Harness = { base, agent, fake, users, nextUser: () => users[turn++ % users.length] };
    log(`registered ${users.length} enterprise users for ${totalStreams} streams`);

    const warmup = await sequential(h, PLAN.warmup.requests, PLAN.warmup);
    if (okCount(warmup.results) !== warmup.results.length) throw new Error(`warm-up failed: ${problemsOf(warmup.results).join('; ')}`);

    const ttfb = await sequential(h, PLAN.ttfb.requests, PLAN.ttfb);
    log(`1. added TTFB p50/p95/p99 ${triple(pick(ttfb.results, (r) => r.addedTtfb))} (${okCount(ttfb.results)}/${ttfb.results.length} ok)`);
    const relay = await sequential(h, PLAN.relay.requests, PLAN.relay);
    log(`2. relay per token p50/p95/p99 ${triple(relayOf(relay.results))} (${okCount(relay.results)}/${relay.results.length} ok)`);
    const baseline = collectGarbage();
    log(`heap after a full GC before the concurrency levels: ${mib(baseline.heapUsed)} (RSS ${mib(baseline.rss)})`);
    const levels: ConcurrencyResult[] = [];
    for (const level of c.levels) {
      const result = await concurrencyLevel(h, level);
      levels.push(result);
      log(`3. C=${level}: ${okCount(result.results)}/${result.requests} ok in ${ms(result.wallMs)}, relay p99 ${ms(relayOf(result.results).p99)}, peak RSS ${mib(result.memory.peakRss)}`);
    }
    const replay = await replays(h);
    log(`4. replay: ${replay.ok}/${replay.requests} ok, ${(replay.requests / (replay.wallMs / 1000)).toFixed(0)} req/s, p50 ${ms(replay.latency.p50)}`);

    const databaseCheck = await checkDatabase(database.url);
    const markdown = renderResults({
      startedAt,
      redis,
      postgres,
      users: users.length,
      durationMs: performance.now() - started,
      ttfb,
      relay,
      baseline,
      levels,
      replay,
      database: databaseCheck,
      logs: logMessages(logs.lines),
    });
    writeFileSync(RESULTS_FILE, markdown);
    log(`wrote ${RESULTS_FILE}`);
  } finally {
    agent.destroy();
    if (app) await app.close().catch((error: unknown) => log(`app.close failed: ${String(error)}`));
    if (fake) await fake.close();
    if (database) await database.drop().catch((error: unknown) => log(`dropping ${database?.name} failed: ${String(error)}`));
    if (redis.used && redis.url) {
      const deleted = await deleteRedisKeys(redis.url, redisPrefix).catch(() => 0);
      log(`cleaned up (database dropped, ${deleted} redis keys under ${redisPrefix} deleted)`);
    } else log('cleaned up (database dropped)');
  }
}

function log(message: string): void {
  process.stdout.write(`[bench ${(performance.now() / 1000).toFixed(1)}s] ${message}\n`);
}

main().then(
  () => watchExit(),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
    watchExit();
  },
);

/** Only fires if something still holds the event loop after cleanup: says what, then exits. */
function watchExit(): void {
  setTimeout(() => {
    process.stderr.write(`bench: the process did not exit 5 s after cleanup; still active: ${process.getActiveResourcesInfo().join(', ')}\n`);
    process.exit(process.exitCode ?? 1);
  }, 5_000).unref();
}
