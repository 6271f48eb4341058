/**
 * `npm run bench:metrics`: what METRICS_PORT costs the chat (GitHub issue "Operations": metrics must cost
 * less than 3 % of chat throughput). Two copies of the compiled service run side by side on one scratch
 * database, one with METRICS_PORT (scraped every second meanwhile, more often than any Prometheus setup) and
 * one without; the mock provider and the load generator are processes of their own, as in `npm run bench`.
 * Every round loads both copies with chats at the same time (the throughput figure: whatever else the machine
 * does weighs on both alike), then measures streams and a cheap route on one copy after the other, the first
 * alternating; the verdict is the median of the per-round ratios with / without.
 *
 * Writes bench/METRICS-OVERHEAD.md (whole) and puts its summary into bench/RESULTS.md (which `npm run bench`
 * rewrites, keeping that section: see bench/support/kept-sections.ts).
 *
 * Flags: --rounds N (default 9), --no-build, --keep-temp, --rate-only, --control, --profile DIR, --help.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createScratchDatabase } from '../scripts/lib/scratch-database';
import { REPO } from './support/children';
import {
  benchChatTarget,
  createUsers,
  deleteRedisKeys,
  postgresVersion,
  serviceEnvironment,
  SHORT_MODEL,
  STREAM_MODEL,
  writeBenchCatalog,
} from './support/environment';
import { LoadGeneratorClient } from './support/loadgen-client';
import { METRICS_OVERHEAD, withKeptSection } from './support/kept-sections';
import { cpuMs, isAlive } from './support/proc';
import { metricsShareOfProfile } from './support/profile-share';
import { ChatJobResult, ChatTarget } from './support/protocol';
import {
  buildThisCheckout,
  CleanupStep,
  mockActive,
  runBench,
  settle,
  startHarness,
  withCpu,
} from './support/side-by-side';
import { freePort, ServiceProcess } from './support/service-process';
import { fmt, fmtSpread, spread } from './support/stats';

const OUTPUT_FILE = join(REPO, 'bench', 'METRICS-OVERHEAD.md');
const RESULTS_FILE = join(REPO, 'bench', 'RESULTS.md');

/** The issue's bound: metrics cost less than 3 % of chat throughput. */
const MAX_COST = 0.03;

const SETTINGS = {
  users: 200,
  /** Chat throughput: clients sending short chats back to back. */
  throughput: {
    connections: 32,
    warmupMs: 1_000,
    durationMs: 5_000,
    deadlineMs: 10_000,
  },
  /** CPU per chat at a fixed rate on each copy at once (below saturation: both see the same load). */
  fixedRate: { perSecond: 250, durationMs: 12_000 },
  /** Streams: simultaneous 50-token answers (the per-token path). */
  streams: { count: 200, deadlineMs: 12_000 },
  /** Cheap route: GET /v1/auth/me back to back (the per-request cost at its largest share). */
  requestRate: { connections: 50, warmupMs: 1_000, durationMs: 3_000 },
  scrapeEveryMs: 1_000,
  /** Untimed chats right before a copy's measurements, so both start as warm (see measureChats()). */
  primeMs: 2_000,
  settle: { cpuPercent: 5, windowMs: 1_000, maxWaitMs: 8_000 },
};

type Side = 'off' | 'on';

interface Figures {
  chatsPerSecond: number;
  cpuPerChat: number;
  cpuPerChatAtRate: number;
  cpuPerStream: number;
  mePerSecond: number;
  cpuPerThousandMe: number;
  errors: number;
  scrapes: number;
}

const FIGURES: {
  key: keyof Figures;
  label: string;
  unit: string;
  better: 'higher' | 'lower' | 'none';
}[] = [
  {
    key: 'chatsPerSecond',
    label:
      'chat throughput (short answers, 32 clients back to back on each copy, both copies at once)',
    unit: 'chats/s',
    better: 'higher',
  },
  {
    key: 'cpuPerChat',
    label: 'service CPU per chat (same job)',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'cpuPerChatAtRate',
    label: 'service CPU per chat at 250 chats/s on each copy, both at once',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'cpuPerStream',
    label: 'service CPU per stream (200 simultaneous 50-token answers)',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'mePerSecond',
    label: 'GET /v1/auth/me rate (50 connections)',
    unit: 'req/s',
    better: 'higher',
  },
  {
    key: 'cpuPerThousandMe',
    label: 'service CPU per 1000 GET /v1/auth/me',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'errors',
    label: 'requests not a complete 200',
    unit: '',
    better: 'none',
  },
  {
    key: 'scrapes',
    label: 'scrapes of /metrics during the measurements',
    unit: '',
    better: 'none',
  },
];

interface Options {
  rounds: number;
  build: boolean;
  keepTemp: boolean;
  /** Directory for both copies' V8 CPU profiles (node --cpu-prof), written when they stop. */
  profileDir: string | undefined;
  /** A/A: the second copy without METRICS_PORT too, to see what the harness alone makes of two equal copies. */
  control: boolean;
  /** Only the verdict's figure (CPU per chat at a fixed rate), so more rounds fit in the same time. */
  rateOnly: boolean;
  help: boolean;
}

const HELP = `npm run bench:metrics [-- flags]
  --rounds N     paired rounds (default 9)
  --no-build     do not run \`npm run build\` first (dist/ must be current)
  --keep-temp    keep the temp directory (service and harness logs)
  --rate-only    only the CPU per chat at a fixed rate (the verdict's figure): more rounds in less time
  --control      A/A run: the "with" copy without METRICS_PORT too (how far apart two equal copies come out);
                 writes no file
  --profile DIR  run both copies with node --cpu-prof, profiles into DIR (the profiler costs CPU: the
                 figures of such a run are not the verdict; the profiles show where the copy with
                 metrics spends its time)
  --help         this text
Environment: BENCH_DATABASE_URL, BENCH_REDIS_URL (as npm run bench)`;

function parseOptions(args: string[]): Options {
  const options: Options = {
    rounds: 9,
    build: true,
    keepTemp: false,
    profileDir: undefined,
    control: false,
    rateOnly: false,
    help: false,
  };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--no-build') options.build = false;
    else if (arg === '--keep-temp') options.keepTemp = true;
    else if (arg === '--control') options.control = true;
    else if (arg === '--rate-only') options.rateOnly = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '--profile')
      options.profileDir = resolvePath(args[++index] ?? '.');
    else if (arg === '--rounds') options.rounds = Number(args[++index]);
    else if (arg.startsWith('--rounds='))
      options.rounds = Number(arg.slice('--rounds='.length));
    else throw new Error(`unknown argument ${arg} (see --help)`);
  }
  if (!(Number.isInteger(options.rounds) && options.rounds >= 1))
    throw new Error('--rounds wants a whole number ≥ 1');
  return options;
}

function log(message: string): void {
  process.stdout.write(
    `[bench:metrics ${new Date().toISOString().slice(11, 19)}] ${message}\n`,
  );
}

/** Scrapes GET /metrics every `everyMs` while `work` runs, as Prometheus would (only for the copy with metrics). */
async function whileScraped<T>(
  metricsUrl: string | undefined,
  everyMs: number,
  work: () => Promise<T>,
): Promise<{ result: T; scrapes: number }> {
  if (!metricsUrl) return { result: await work(), scrapes: 0 };
  let scrapes = 0;
  const timer = setInterval(() => {
    void fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.ok) scrapes += 1;
      })
      .catch(() => undefined);
  }, everyMs);
  try {
    return { result: await work(), scrapes };
  } finally {
    clearInterval(timer);
  }
}

interface Copy {
  side: Side;
  service: ServiceProcess;
  metricsUrl?: string;
}

function chatTarget(
  copy: Copy,
  cookies: string[],
  model: typeof SHORT_MODEL,
  deadlineMs: number,
  label: string,
  tag: string,
): ChatTarget {
  return benchChatTarget({
    baseUrl: copy.service.url,
    model,
    cookies,
    keyPrefix: `metrics-${tag}-${label}-${copy.side}`,
    deadlineMs,
  });
}

/** Runs `work`, scraping the copy with metrics meanwhile; answers the CPU each pid used (from /proc). */
async function timed<T>(
  pids: number[],
  metricsUrl: string | undefined,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: number[]; scrapes: number }> {
  const measured = await withCpu(
    pids.map((pid) => () => cpuMs(pid)),
    () => whileScraped(metricsUrl, SETTINGS.scrapeEveryMs, work),
  );
  return {
    result: measured.result.result,
    cpu: measured.cpu,
    scrapes: measured.result.scrapes,
  };
}

type ChatFigures = Pick<
  Figures,
  'chatsPerSecond' | 'cpuPerChat' | 'cpuPerChatAtRate' | 'errors' | 'scrapes'
>;

/**
 * Chat throughput of both copies at once: as many clients on each, over the same window, so whatever else
 * the machine does meanwhile weighs on both alike (measured one after the other, copies of one build
 * differed by ±10 % from round to round on this shared machine). Each copy's CPU per chat over the same job.
 */
async function measureChats(
  copies: Record<Side, Copy>,
  first: Side,
  loadgen: LoadGeneratorClient,
  cookies: string[],
  tag: string,
  quiet: () => Promise<void>,
  saturated: boolean,
): Promise<Record<Side, ChatFigures>> {
  const s = SETTINGS.throughput;
  const second: Side = first === 'on' ? 'off' : 'on';
  const job = (label: string, warmupMs: number, durationMs: number) =>
    loadgen.chat(
      {
        kind: 'closedLoop',
        target: chatTarget(
          copies[first],
          cookies,
          SHORT_MODEL,
          s.deadlineMs,
          label,
          tag,
        ),
        alongside: chatTarget(
          copies[second],
          cookies,
          SHORT_MODEL,
          s.deadlineMs,
          label,
          tag,
        ),
        connections: s.connections,
        warmupMs,
        durationMs,
      },
      warmupMs + durationMs + s.deadlineMs + 30_000,
    );
  // Both primed at once first: a copy idle for a while (pool connections closed after 10 s, heap shrunk by
  // V8's memory reducer) was measured 10-30 % slower than one just used, whatever METRICS_PORT.
  await job('prime', 0, SETTINGS.primeMs);
  await quiet();
  const pids = [copies[first].service.pid, copies[second].service.pid];
  const measured = saturated
    ? await timed(pids, copies.on.metricsUrl, () =>
        job('tp', s.warmupMs, s.durationMs),
      )
    : undefined;
  const results = {
    [first]: measured?.result,
    [second]: measured?.result.alongside,
  } as Record<Side, ChatJobResult | undefined>;
  const cpu = {
    [first]: measured?.cpu[0] ?? Number.NaN,
    [second]: measured?.cpu[1] ?? Number.NaN,
  } as Record<Side, number>;
  // The same load on both at once, below saturation: the CPU each spends per chat, with batching alike.
  await quiet();
  const rate = SETTINGS.fixedRate;
  const openLoop = (side: Side) =>
    loadgen.chat(
      {
        kind: 'openLoop',
        target: chatTarget(
          copies[side],
          cookies,
          SHORT_MODEL,
          s.deadlineMs,
          'rate',
          tag,
        ),
        rate: rate.perSecond,
        durationMs: rate.durationMs,
        maxStartMs: s.deadlineMs,
        stopWhenFailed: false,
      },
      rate.durationMs + s.deadlineMs + 30_000,
    );
  const atRate = await timed(pids, copies.on.metricsUrl, () =>
    Promise.all([openLoop(first), openLoop(second)]),
  );
  const rateResults = {
    [first]: atRate.result[0],
    [second]: atRate.result[1],
  } as Record<Side, (typeof atRate.result)[number]>;
  const rateCpu = { [first]: atRate.cpu[0], [second]: atRate.cpu[1] } as Record<
    Side,
    number
  >;
  const figures = (side: Side): ChatFigures => {
    const result = results[side];
    if (saturated && !result)
      throw new Error('the load generator gave no result for the second copy');
    const fixed = rateResults[side];
    return {
      chatsPerSecond: result
        ? (result.windowOk ?? 0) / (s.durationMs / 1000)
        : Number.NaN,
      cpuPerChat: result
        ? cpu[side] / Math.max(1, result.outcomes.ok)
        : Number.NaN,
      cpuPerChatAtRate: rateCpu[side] / Math.max(1, fixed.outcomes.ok),
      errors:
        (result ? result.requests - result.outcomes.ok : 0) +
        fixed.requests -
        fixed.outcomes.ok,
      scrapes: side === 'on' ? (measured?.scrapes ?? 0) + atRate.scrapes : 0,
    };
  };
  return { on: figures('on'), off: figures('off') };
}

type AloneFigures = Pick<
  Figures,
  'cpuPerStream' | 'mePerSecond' | 'cpuPerThousandMe' | 'errors' | 'scrapes'
>;

const NOT_MEASURED: AloneFigures = {
  cpuPerStream: Number.NaN,
  mePerSecond: Number.NaN,
  cpuPerThousandMe: Number.NaN,
  errors: 0,
  scrapes: 0,
};

/** One copy alone: CPU per stream of a burst of 50-token answers, and the rate of GET /v1/auth/me. */
async function measureAlone(
  copy: Copy,
  loadgen: LoadGeneratorClient,
  cookies: string[],
  meBytes: number,
  tag: string,
  quiet: () => Promise<void>,
  drain: () => Promise<void>,
): Promise<AloneFigures> {
  const s = SETTINGS;
  const pids = [copy.service.pid];
  await loadgen.chat(
    {
      kind: 'closedLoop',
      target: chatTarget(
        copy,
        cookies,
        SHORT_MODEL,
        s.throughput.deadlineMs,
        'prime',
        tag,
      ),
      connections: s.throughput.connections,
      warmupMs: 0,
      durationMs: s.primeMs,
    },
    s.primeMs + s.throughput.deadlineMs + 30_000,
  );
  await quiet();
  const streams = await timed(pids, copy.metricsUrl, async () => {
    const result = await loadgen.chat(
      {
        kind: 'burst',
        target: chatTarget(
          copy,
          cookies,
          STREAM_MODEL,
          s.streams.deadlineMs,
          'st',
          tag,
        ),
        requests: s.streams.count,
      },
      s.streams.deadlineMs + 60_000,
    );
    await drain();
    return result;
  });
  await quiet();
  const me = await timed(pids, copy.metricsUrl, () =>
    loadgen.rate(
      {
        kind: 'requestRate',
        baseUrl: copy.service.url,
        path: '/v1/auth/me',
        cookies,
        connections: s.requestRate.connections,
        warmupMs: s.requestRate.warmupMs,
        durationMs: s.requestRate.durationMs,
        expectedBytes: meBytes,
      },
      s.requestRate.warmupMs + s.requestRate.durationMs + 30_000,
    ),
  );
  const meErrors = Object.values(me.result.errors).reduce(
    (total, count) => total + count,
    0,
  );
  return {
    cpuPerStream: streams.cpu[0] / s.streams.count,
    mePerSecond: me.result.perSecond,
    cpuPerThousandMe: (me.cpu[0] / Math.max(1, me.result.completed)) * 1000,
    errors: streams.result.requests - streams.result.outcomes.ok + meErrors,
    scrapes: streams.scrapes + me.scrapes,
  };
}

function render(info: {
  command: string;
  startedAt: Date;
  machine: string;
  postgres: string;
  rounds: { round: number; order: Side[]; off: Figures; on: Figures }[];
  totalMs: number;
  notes: string[];
}): { full: string; summary: string } {
  const ratio = (key: keyof Figures) =>
    spread(info.rounds.map((round) => round.on[key] / round.off[key]));
  const throughput = ratio('chatsPerSecond');
  const atRate = ratio('cpuPerChatAtRate');
  // On a machine the chat saturates (CPU-bound), throughput is the inverse of the CPU a chat costs: the CPU per
  // chat under the same load on both copies at once is the precise measure (saturated throughput ratios
  // move ±10 % from round to round even between two equal copies: --control).
  const cost = atRate.median - 1;
  const verdict = cost < MAX_COST ? 'PASS' : 'FAIL';
  const summaryLines = [
    `Measured ${info.startedAt.toISOString().slice(0, 10)} with \`${info.command}\` (${info.rounds.length} paired rounds; ${info.machine}). ` +
      `Service CPU per chat with METRICS_PORT / without, under the same load on both copies at once: **${fmtSpread(atRate)}×** (median [min–max] of the per-round ratios), ` +
      `so metrics cost **${fmt(cost * 100)} %** of what a chat costs, and of chat throughput where the CPU is the limit (bound: < ${MAX_COST * 100} %): **${verdict}**. ` +
      `Saturated chat throughput with / without, both at once: ${fmtSpread(throughput)}× (noisier: two equal copies give about ±10 % per round here).`,
    '',
    '| figure | without METRICS_PORT | with METRICS_PORT (scraped every second) | with / without |',
    '|---|---|---|---|',
    ...FIGURES.map((figure) => {
      const off = spread(info.rounds.map((round) => round.off[figure.key]));
      const on = spread(info.rounds.map((round) => round.on[figure.key]));
      const both =
        figure.better === 'none' ? '–' : `${fmtSpread(ratio(figure.key))}×`;
      return `| ${figure.label} | ${fmtSpread(off, figure.unit)} | ${fmtSpread(on, figure.unit)} | ${both} |`;
    }),
  ];
  const summary = summaryLines.join('\n');
  const full = [
    '# Metrics overhead: the chat with and without METRICS_PORT',
    '',
    'Written by `npm run bench:metrics` (bench/metrics-overhead.ts, see bench/README.md); the whole file is rewritten on every run, and its summary is copied into bench/RESULTS.md.',
    '',
    '| | |',
    '|---|---|',
    `| date | ${info.startedAt.toISOString()} |`,
    `| command | \`${info.command}\` |`,
    `| machine | ${info.machine}, Node ${process.version}, ${info.postgres} |`,
    `| time | ${Math.round(info.totalMs / 1000)} s |`,
    '',
    '## How',
    '',
    '- Two copies of the compiled service (`node dist/main.js`, NODE_ENV=production, LOG_LEVEL=info), on one scratch database and Redis, each its own process: one without METRICS_PORT, one with it. The mock provider and the load generator are processes of their own (bench/processes). Both copies are warmed up first.',
    `- The copy with METRICS_PORT is scraped (GET /metrics) every ${SETTINGS.scrapeEveryMs / 1000} s during its measurements: more often than any Prometheus setup, so the scrapes' cost is included.`,
    `- Chat throughput is measured on both copies at once (as many clients on each, over the same window), so whatever else the shared machine does meanwhile weighs on both alike; measured one after the other, two copies of the same build differed by ±10 % from round to round. The other figures are measured one copy after the other, the first alternating by round. Before its measurements a copy gets ${SETTINGS.primeMs / 1000} s of untimed chats, so both start as warm: without it, a copy that had been idle while the other was measured came out 10-30 % slower whether or not it had METRICS_PORT. Before each measurement both copies are quiet (under ${SETTINGS.settle.cpuPercent} % of a core for ${SETTINGS.settle.windowMs / 1000} s, at most ${SETTINGS.settle.maxWaitMs / 1000} s) and no mock stream is open.`,
    `- CPU per chat at a fixed rate: ${SETTINGS.fixedRate.perSecond} chats of \`${SHORT_MODEL.id}\` per second on each copy at once, on a fixed schedule (open loop), for ${SETTINGS.fixedRate.durationMs / 1000} s: each copy's CPU (utime+stime, /proc) over the job / its complete 200s. The same load on both, below saturation, so both batch their database work alike; this is the verdict's figure.`,
    `- Chat throughput: ${SETTINGS.throughput.connections} clients on each copy each send a chat of \`${SHORT_MODEL.id}\` (3 tokens, no delay: the service's own work is the bottleneck) as soon as the previous answer is read; after ${SETTINGS.throughput.warmupMs / 1000} s, the complete 200s of the next ${SETTINGS.throughput.durationMs / 1000} s are counted. CPU per chat = the service process's CPU (utime+stime, /proc) over the whole job / its complete 200s.`,
    `- Streams: ${SETTINGS.streams.count} requests of \`${STREAM_MODEL.id}\` (50 tokens, 10 per second) at once; CPU from the start until the mock has no open stream / ${SETTINGS.streams.count}.`,
    `- GET /v1/auth/me: ${SETTINGS.requestRate.connections} keep-alive connections back to back, ${SETTINGS.requestRate.warmupMs / 1000} s warm-up, answers of the next ${SETTINGS.requestRate.durationMs / 1000} s per second; CPU over the whole job / answers × 1000.`,
    '- Figures are `median [min–max]` over rounds; the last column is the median [min–max] of the per-round ratios with / without.',
    '',
    '## Summary',
    '',
    METRICS_OVERHEAD.start,
    summary,
    METRICS_OVERHEAD.end,
    '',
    '## Rounds',
    '',
    '| round | first | CPU/chat at rate without (ms) | with (ms) | ratio | chats/s without | with | ratio | CPU/chat saturated without (ms) | with (ms) | CPU/stream without (ms) | with (ms) | me/s without | with |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...info.rounds.map(
      ({ round, order, off, on }) =>
        `| ${round} | ${order[0]} | ${fmt(off.cpuPerChatAtRate)} | ${fmt(on.cpuPerChatAtRate)} | ${fmt(on.cpuPerChatAtRate / off.cpuPerChatAtRate)} | ${fmt(off.chatsPerSecond)} | ${fmt(on.chatsPerSecond)} | ${fmt(on.chatsPerSecond / off.chatsPerSecond)} | ` +
        `${fmt(off.cpuPerChat)} | ${fmt(on.cpuPerChat)} | ${fmt(off.cpuPerStream)} | ${fmt(on.cpuPerStream)} | ${fmt(off.mePerSecond)} | ${fmt(on.mePerSecond)} |`,
    ),
    ...(info.notes.length > 0
      ? ['', '## Notes', '', ...info.notes.map((note) => `- ${note}`)]
      : []),
    '',
  ].join('\n');
  return { full, summary };
}

function commandLine(args: string[]): string {
  if (process.env.npm_lifecycle_event === 'bench:metrics')
    return `npm run bench:metrics${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
  return `ts-node --transpile-only bench/metrics-overhead.ts${args.length > 0 ? ` ${args.join(' ')}` : ''}`;
}

async function main(cleanup: CleanupStep[]): Promise<number> {
  const args = process.argv.slice(2);
  const options = parseOptions(args);
  if (options.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const startedAt = new Date();
  const t0 = performance.now();
  if (options.build) buildThisCheckout(log);
  if (!existsSync(join(REPO, 'dist', 'main.js')))
    throw new Error('dist/main.js is missing: run without --no-build');
  const tag = randomBytes(4).toString('hex');
  const { temp, compiled, harnessLog, mockUrl, serverUrl, redisUrl } =
    await startHarness(
      cleanup,
      { tempPrefix: 'chat-bench-metrics-', keepTemp: options.keepTemp },
      log,
    );
  const redisPrefix = `chat-bench-metrics-${tag}:`;
  const db = await createScratchDatabase(serverUrl, 'chat_bench_metrics');
  cleanup.push({ name: 'database', run: () => db.drop() });
  cleanup.push({
    name: 'redis keys',
    run: () => deleteRedisKeys(redisUrl, redisPrefix),
  });
  const catalogFile = join(temp, 'catalog.json');
  writeBenchCatalog(catalogFile);
  const env = {
    ...serviceEnvironment(mockUrl, redisUrl),
    DATABASE_URL: db.url,
    REDIS_KEY_PREFIX: redisPrefix,
    CATALOG_FILE: catalogFile,
    STORAGE_DIR: join(temp, 'files'),
    // Sessions stay cached for the whole run: with the default 30 s, whichever copy was measured second
    // found its sessions expiring mid-measurement (its last use was the other copy's turn ago) and paid
    // database reads the first did not, metrics or not.
    SESSION_CACHE_TTL_MS: '3600000',
  };
  const nodeArgs = options.profileDir
    ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`]
    : [];
  const metricsPort = await freePort();
  const copies: Record<Side, Copy> = {
    off: {
      side: 'off',
      service: new ServiceProcess(
        env,
        join(temp, 'service-off.log'),
        t0,
        nodeArgs,
      ),
    },
    on: options.control
      ? {
          side: 'on',
          service: new ServiceProcess(
            env,
            join(temp, 'service-on.log'),
            t0,
            nodeArgs,
          ),
        }
      : {
          side: 'on',
          service: new ServiceProcess(
            { ...env, METRICS_PORT: String(metricsPort) },
            join(temp, 'service-on.log'),
            t0,
            nodeArgs,
          ),
          metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
        },
  };
  // One after the other: the first applies the migrations.
  for (const copy of Object.values(copies)) {
    cleanup.push({
      name: `service ${copy.side}`,
      run: () => copy.service.stop(),
    });
    await copy.service.start();
  }
  if (
    !options.control &&
    (await fetch(copies.on.metricsUrl ?? '')).status !== 200
  )
    throw new Error('the copy with METRICS_PORT does not serve /metrics');
  const cookies = await createUsers(db.url, SETTINGS.users, tag);
  // Every user's email has the same length (createUsers), so every /v1/auth/me answer has this many bytes.
  const meBytes = (
    await (
      await fetch(`${copies.off.service.url}/v1/auth/me`, {
        headers: { cookie: cookies[0] },
      })
    ).arrayBuffer()
  ).byteLength;
  const loadgen = new LoadGeneratorClient(compiled, harnessLog);
  await loadgen.start();
  cleanup.push({ name: 'load generator', run: () => loadgen.stop() });
  log(
    `services: without metrics pid ${copies.off.service.pid}, with metrics pid ${copies.on.service.pid} (/metrics on ${metricsPort}); ${SETTINGS.users} users`,
  );

  const pids = () => [copies.off.service.pid, copies.on.service.pid];
  const quiet = () => settle(pids(), mockUrl, SETTINGS.settle);
  const drain = async () => {
    const started = performance.now();
    while (
      (await mockActive(mockUrl)) > 0 &&
      performance.now() - started < 5_000
    )
      await new Promise((resolve) => setTimeout(resolve, 100));
  };
  log('warm-up');
  for (const copy of Object.values(copies)) {
    await loadgen.chat(
      {
        kind: 'sequential',
        target: chatTarget(copy, cookies, SHORT_MODEL, 10_000, 'warm', tag),
        requests: 30,
      },
      120_000,
    );
    await loadgen.chat(
      {
        kind: 'closedLoop',
        target: chatTarget(copy, cookies, SHORT_MODEL, 10_000, 'warm', tag),
        connections: 32,
        warmupMs: 0,
        durationMs: 2_000,
      },
      60_000,
    );
    await loadgen.rate(
      {
        kind: 'requestRate',
        baseUrl: copy.service.url,
        path: '/v1/auth/me',
        cookies,
        connections: 10,
        warmupMs: 0,
        durationMs: 500,
        expectedBytes: 0,
      },
      30_000,
    );
  }

  const rounds: {
    round: number;
    order: Side[];
    off: Figures;
    on: Figures;
  }[] = [];
  const notes: string[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const order: Side[] = round % 2 === 1 ? ['off', 'on'] : ['on', 'off'];
    for (const copy of Object.values(copies)) {
      if (!isAlive(copy.service.pid))
        throw new Error(
          `the service ${copy.side === 'on' ? 'with' : 'without'} metrics exited. Last log lines:\n${copy.service.log.tail(20).join('\n')}`,
        );
    }
    const chats = await measureChats(
      copies,
      order[0],
      loadgen,
      cookies,
      tag,
      quiet,
      !options.rateOnly,
    );
    const figures: Partial<Record<Side, Figures>> = {};
    for (const side of order) {
      const alone = options.rateOnly
        ? NOT_MEASURED
        : await measureAlone(
            copies[side],
            loadgen,
            cookies,
            meBytes,
            tag,
            quiet,
            drain,
          );
      const measured: Figures = {
        ...chats[side],
        ...alone,
        errors: chats[side].errors + alone.errors,
        scrapes: chats[side].scrapes + alone.scrapes,
      };
      figures[side] = measured;
      log(
        `round ${round} ${side === 'on' ? 'with' : 'without'} metrics: ${Object.entries(
          measured,
        )
          .map(([key, value]: [string, number]) => `${key}=${fmt(value)}`)
          .join(' ')}`,
      );
    }
    const { off, on } = figures as Record<Side, Figures>;
    if (off.errors + on.errors > 0)
      notes.push(
        `round ${round}: ${off.errors} requests without and ${on.errors} with metrics were not a complete 200`,
      );
    rounds.push({ round, order, off, on });
    log(
      `round ${round}: with / without: CPU per chat at a fixed rate ${fmt(on.cpuPerChatAtRate / off.cpuPerChatAtRate)}, saturated chat throughput ${fmt(on.chatsPerSecond / off.chatsPerSecond)}`,
    );
  }
  for (const copy of Object.values(copies)) {
    const serious = Object.entries(copy.service.log.seriousSince(0));
    if (serious.length > 0)
      notes.push(
        `service ${copy.side === 'on' ? 'with' : 'without'} metrics, log lines at warn or above: ${serious.map(([line, count]) => `${count}× ${line}`).join('; ')}`,
      );
  }
  const cpuList = cpus();
  const { full, summary } = render({
    command: commandLine(args),
    startedAt,
    machine: `${cpuList[0]?.model.trim() ?? 'unknown'}, ${cpuList.length} CPUs, Linux ${release()}`,
    postgres: await postgresVersion(db.url).catch(
      () => 'PostgreSQL (version unknown)',
    ),
    rounds,
    totalMs: performance.now() - t0,
    notes,
  });
  if (options.control) {
    log(
      `control run (both copies without METRICS_PORT): ${OUTPUT_FILE} left as it was`,
    );
  } else if (options.profileDir) {
    // The profiles are written when the copies stop.
    const onPid = copies.on.service.pid;
    await Promise.all(Object.values(copies).map((copy) => copy.service.stop()));
    const profile = readdirSync(options.profileDir).find(
      (name) => name.includes(`.${onPid}.`) && name.endsWith('.cpuprofile'),
    );
    if (profile) {
      const share = metricsShareOfProfile(join(options.profileDir, profile));
      log(
        `CPU profile of the copy with metrics: ${share.metricsSamples} of ${share.busySamples} busy samples (${fmt(share.share * 100)} %) in metrics code (prom-client, src/infra/metrics, the GC observer), scrapes every ${SETTINGS.scrapeEveryMs / 1000} s included`,
      );
    }
    log(
      `profiled run: ${OUTPUT_FILE} left as it was (the profiler's cost is in its figures); profiles in ${options.profileDir}`,
    );
  } else {
    writeFileSync(OUTPUT_FILE, full);
    if (existsSync(RESULTS_FILE))
      writeFileSync(
        RESULTS_FILE,
        withKeptSection(
          METRICS_OVERHEAD,
          readFileSync(RESULTS_FILE, 'utf8'),
          summary,
        ),
      );
    log(`wrote ${OUTPUT_FILE} and its summary into ${RESULTS_FILE}`);
  }
  process.stdout.write(`${summary}\n`);
  return 0;
}

runBench(main, log);
