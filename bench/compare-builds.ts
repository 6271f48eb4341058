/**
 * `npm run bench:builds -- --before DIR`: what this build costs a plain chat against an earlier one (GitHub
 * issue 34, point 3: the tools, organizations and providers work must cost a chat that uses none of them
 * nothing measurable). Both compiled builds run side by side, each its own process with its own scratch
 * database (their schemas differ) and Redis prefix, the same users and sessions in both; the mock provider
 * and the load generator are processes of their own, as in `npm run bench`. Every measurement loads both
 * copies at the same time, so whatever else the shared machine does weighs on both alike (one after the
 * other, the same build moved 60 % from one round to the next here); the verdict is over the per-round
 * ratios this / before.
 *
 * Writes bench/BUILDS-COMPARED.md (whole) and puts its summary into bench/RESULTS.md (kept by
 * `npm run bench`: see bench/support/kept-sections.ts). Flags: see HELP.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createScratchDatabase } from '../scripts/lib/scratch-database';
import { REPO } from './support/children';
import {
  benchChatTarget,
  createUsers,
  deleteRedisKeys,
  fetchText,
  postgresVersion,
  serviceEnvironment,
  SHORT_MODEL,
  writeBenchCatalog,
} from './support/environment';
import { BUILDS_COMPARED, withKeptSection } from './support/kept-sections';
import { LoadGeneratorClient } from './support/loadgen-client';
import { BackendCpu, cpuMs, isAlive } from './support/proc';
import { ChatJobResult, ChatTarget } from './support/protocol';
import { ServiceProcess } from './support/service-process';
import {
  buildThisCheckout,
  CleanupStep,
  runBench,
  settle,
  startHarness,
  withCpu,
} from './support/side-by-side';
import {
  fmt,
  fmtSpread,
  median,
  percentile,
  signTestP,
  spread,
} from './support/stats';

const RESULTS_FILE = join(REPO, 'bench', 'RESULTS.md');

const SETTINGS = {
  users: 200,
  /** Untimed chats on both at once before each round's measurements (pools open, JIT warm, heaps grown). */
  primeMs: 2_000,
  /** The verdict's load: the same fixed rate of short chats on both at once, below saturation. */
  fixedRate: { perSecond: 150, durationMs: 8_000 },
  /** Saturated chat throughput: clients sending short chats back to back on each copy, both at once. */
  throughput: { connections: 32, warmupMs: 1_000, durationMs: 4_000 },
  /** Concurrency 1 on each copy, both at once: the start (sent -> first body byte). */
  sequential: { requests: 150 },
  /** GET /v1/auth/me from this many clients back to back on each copy, both at once (bench f's cheap route). */
  me: { connections: 25, warmupMs: 500, durationMs: 3_000 },
  deadlineMs: 10_000,
  settle: { cpuPercent: 5, windowMs: 1_000, maxWaitMs: 8_000 },
};

/** A one-sided sign test below this p says "after costs more": measurable. */
const SIGNIFICANCE = 0.05;

type Side = 'before' | 'after';
const SIDES: readonly Side[] = ['before', 'after'];

interface Figures {
  /** Service + its PostgreSQL backends, per chat, at the fixed rate: the verdict's figure. */
  cpuPerChatAtRate: number;
  serviceCpuPerChatAtRate: number;
  postgresCpuPerChatAtRate: number;
  chatsPerSecond: number;
  cpuPerChatSaturated: number;
  startP50: number;
  startP99: number;
  mePerSecond: number;
  serviceCpuPerMe: number;
  errors: number;
}

const FIGURES: {
  key: keyof Figures;
  label: string;
  unit: string;
  better: 'higher' | 'lower' | 'none';
}[] = [
  {
    key: 'cpuPerChatAtRate',
    label: `CPU per chat at ${SETTINGS.fixedRate.perSecond}/s on each, both at once: service + its PostgreSQL backends (the verdict)`,
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'serviceCpuPerChatAtRate',
    label: '… of which the service process',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'postgresCpuPerChatAtRate',
    label: '… of which PostgreSQL',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'chatsPerSecond',
    label: `saturated chat throughput (${SETTINGS.throughput.connections} clients back to back on each, both at once)`,
    unit: 'chats/s',
    better: 'higher',
  },
  {
    key: 'cpuPerChatSaturated',
    label: 'service + PostgreSQL CPU per chat, saturated',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'startP50',
    label: 'start p50 at concurrency 1 (both at once)',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'startP99',
    label: 'start p99 at concurrency 1 (both at once)',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'mePerSecond',
    label: `GET /v1/auth/me answers per second (${SETTINGS.me.connections} clients back to back on each, both at once)`,
    unit: '/s',
    better: 'higher',
  },
  {
    key: 'serviceCpuPerMe',
    label: 'service CPU per 1,000 GET /v1/auth/me answers (warm-up included)',
    unit: 'ms',
    better: 'lower',
  },
  {
    key: 'errors',
    label: 'requests not a complete 200',
    unit: '',
    better: 'none',
  },
];

interface Options {
  before: string | undefined;
  /** Another checkout in place of this one (bisecting between two earlier builds). */
  after: string | undefined;
  rounds: number;
  build: boolean;
  keepTemp: boolean;
  control: boolean;
  /** Directory for both copies' V8 CPU profiles (node --cpu-prof), written when they stop. */
  profileDir: string | undefined;
  /** Extra environment of the "after" copy only (with --control: a setting's cost on one build). */
  afterEnv: Record<string, string>;
  help: boolean;
}

const HELP = `npm run bench:builds -- --before DIR [flags]
  --before DIR   a checkout of the earlier build, installed and built, e.g.
                   git worktree add /tmp/before 714f88e
                   (cd /tmp/before && npm install && npm run build)
  --after DIR    another built checkout in place of this one (to bisect between earlier builds)
  --rounds N     paired rounds (default 9)
  --no-build     do not run \`npm run build\` here first (dist/ must be current)
  --keep-temp    keep the temp directory (service and harness logs)
  --control      A/A run: the "after" build on both sides (how far apart two equal copies come out); writes no file
  --profile DIR  run both copies under node --cpu-prof, profiles into DIR (named by pid; the log names
                 which pid is which); the profiler costs CPU: such a run writes no file
  --after-env NAME=VALUE  one more environment variable for the "after" copy only (repeatable); with
                 --control, what a setting costs one build (e.g. LOG_LEVEL=warn); writes no file
  --help         this text
Environment: BENCH_DATABASE_URL, BENCH_REDIS_URL (as npm run bench)`;

function parseOptions(args: string[]): Options {
  const options: Options = {
    before: undefined,
    after: undefined,
    rounds: 9,
    build: true,
    keepTemp: false,
    control: false,
    profileDir: undefined,
    afterEnv: {},
    help: false,
  };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--no-build') options.build = false;
    else if (arg === '--keep-temp') options.keepTemp = true;
    else if (arg === '--control') options.control = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '--before')
      options.before = resolvePath(args[++index] ?? '.');
    else if (arg === '--profile')
      options.profileDir = resolvePath(args[++index] ?? '.');
    else if (arg === '--after')
      options.after = resolvePath(args[++index] ?? '.');
    else if (arg === '--rounds') options.rounds = Number(args[++index]);
    else if (arg === '--after-env') {
      const setting = args[++index] ?? '';
      const equals = setting.indexOf('=');
      if (equals < 1) throw new Error('--after-env wants NAME=VALUE');
      options.afterEnv[setting.slice(0, equals)] = setting.slice(equals + 1);
    } else throw new Error(`unknown argument ${arg} (see --help)`);
  }
  if (!(Number.isInteger(options.rounds) && options.rounds >= 1))
    throw new Error('--rounds wants a whole number ≥ 1');
  if (!options.help && !options.control && !options.before)
    throw new Error('--before DIR is required (or --control; see --help)');
  return options;
}

function log(message: string): void {
  process.stdout.write(
    `[bench:builds ${new Date().toISOString().slice(11, 19)}] ${message}\n`,
  );
}

/** `abc1234 subject` of a checkout's HEAD, "+ uncommitted changes" when its tree is dirty. */
function describeCheckout(dir: string): string {
  const git = (...args: string[]) =>
    spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).stdout.trim();
  const head = git('log', '-1', '--format=%h %s').slice(0, 110);
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return `${head}${dirty ? ' (+ uncommitted changes)' : ''}`;
}

interface Copy {
  side: Side;
  service: ServiceProcess;
  database: string;
  /** Byte length of GET /v1/auth/me's body (every user's email has the same length). */
  meBytes: number;
}

function chatTarget(copy: Copy, cookies: string[], label: string): ChatTarget {
  return benchChatTarget({
    baseUrl: copy.service.url,
    model: SHORT_MODEL,
    cookies,
    keyPrefix: `builds-${label}-${copy.side}`,
    deadlineMs: SETTINGS.deadlineMs,
  });
}

/** Runs `work` and answers, per copy (in `copies` order), the CPU its service and its PostgreSQL backends used. */
async function withCopiesCpu<T>(
  copies: Copy[],
  work: () => Promise<T>,
): Promise<{ result: T; service: number[]; postgres: number[] }> {
  const backends = copies.map((copy) => new BackendCpu(copy.database));
  const measured = await withCpu(
    copies.map((copy) => () => cpuMs(copy.service.pid)),
    work,
  );
  return {
    result: measured.result,
    service: measured.cpu,
    postgres: backends.map((backend) => backend.stop()),
  };
}

function failed(result: ChatJobResult): number {
  return result.requests - result.outcomes.ok;
}

/** One paired round: every measurement on both copies at once; `first` is the closed loop's main target. */
async function measureRound(
  copies: Record<Side, Copy>,
  first: Side,
  loadgen: LoadGeneratorClient,
  cookies: string[],
  quiet: () => Promise<void>,
): Promise<Record<Side, Figures>> {
  const second: Side = first === 'before' ? 'after' : 'before';
  const ordered = [copies[first], copies[second]];
  const closedLoop = (label: string, warmupMs: number, durationMs: number) =>
    loadgen.chat(
      {
        kind: 'closedLoop',
        target: chatTarget(copies[first], cookies, label),
        alongside: chatTarget(copies[second], cookies, label),
        connections: SETTINGS.throughput.connections,
        warmupMs,
        durationMs,
      },
      warmupMs + durationMs + SETTINGS.deadlineMs + 30_000,
    );
  await closedLoop('prime', 0, SETTINGS.primeMs);
  await quiet();

  const rate = SETTINGS.fixedRate;
  const atRate = await withCopiesCpu(ordered, () =>
    Promise.all(
      ordered.map((copy) =>
        loadgen.chat(
          {
            kind: 'openLoop',
            target: chatTarget(copy, cookies, 'rate'),
            rate: rate.perSecond,
            durationMs: rate.durationMs,
            maxStartMs: SETTINGS.deadlineMs,
            stopWhenFailed: false,
          },
          rate.durationMs + SETTINGS.deadlineMs + 30_000,
        ),
      ),
    ),
  );
  await quiet();

  const saturated = await withCopiesCpu(ordered, () =>
    closedLoop(
      'tp',
      SETTINGS.throughput.warmupMs,
      SETTINGS.throughput.durationMs,
    ),
  );
  const alongside = saturated.result.alongside;
  if (!alongside)
    throw new Error('the load generator gave no result for the second copy');
  const saturatedResults = [saturated.result, alongside];
  await quiet();

  const sequential = await Promise.all(
    ordered.map((copy) =>
      loadgen.chat(
        {
          kind: 'sequential',
          target: chatTarget(copy, cookies, 'seq'),
          requests: SETTINGS.sequential.requests,
        },
        SETTINGS.sequential.requests * SETTINGS.deadlineMs,
      ),
    ),
  );

  await quiet();
  const me = await withCopiesCpu(ordered, () =>
    Promise.all(
      ordered.map((copy) =>
        loadgen.rate(
          {
            kind: 'requestRate',
            baseUrl: copy.service.url,
            path: '/v1/auth/me',
            cookies,
            connections: SETTINGS.me.connections,
            warmupMs: SETTINGS.me.warmupMs,
            durationMs: SETTINGS.me.durationMs,
            expectedBytes: copy.meBytes,
          },
          SETTINGS.me.warmupMs + SETTINGS.me.durationMs + 30_000,
        ),
      ),
    ),
  );

  const figures = (index: number): Figures => {
    const fixed = atRate.result[index];
    const okAtRate = Math.max(1, fixed.outcomes.ok);
    const tp = saturatedResults[index];
    const okSaturated = Math.max(1, tp.outcomes.ok);
    return {
      cpuPerChatAtRate:
        (atRate.service[index] + atRate.postgres[index]) / okAtRate,
      serviceCpuPerChatAtRate: atRate.service[index] / okAtRate,
      postgresCpuPerChatAtRate: atRate.postgres[index] / okAtRate,
      chatsPerSecond:
        (tp.windowOk ?? 0) / (SETTINGS.throughput.durationMs / 1000),
      cpuPerChatSaturated:
        (saturated.service[index] + saturated.postgres[index]) / okSaturated,
      startP50: median(sequential[index].starts),
      startP99: percentile(sequential[index].starts, 99),
      mePerSecond: me.result[index].perSecond,
      serviceCpuPerMe:
        (1000 * me.service[index]) / Math.max(1, me.result[index].completed),
      errors:
        failed(fixed) +
        failed(tp) +
        failed(sequential[index]) +
        me.result[index].wrong +
        Object.values(me.result[index].errors).reduce((a, b) => a + b, 0),
    };
  };
  return { [first]: figures(0), [second]: figures(1) } as Record<Side, Figures>;
}

interface RoundFigures {
  round: number;
  first: Side;
  before: Figures;
  after: Figures;
}

function render(info: {
  command: string;
  startedAt: Date;
  machine: string;
  postgres: string;
  before: string;
  after: string;
  rounds: RoundFigures[];
  totalMs: number;
  notes: string[];
}): { full: string; summary: string } {
  const ratios = (key: keyof Figures) =>
    info.rounds.map((round) => round.after[key] / round.before[key]);
  const verdictRatios = ratios('cpuPerChatAtRate');
  const verdictSpread = spread(verdictRatios);
  const higher = verdictRatios.filter((ratio) => ratio > 1).length;
  const untied = verdictRatios.filter((ratio) => ratio !== 1).length;
  const p = signTestP(higher, untied);
  const measurable = p < SIGNIFICANCE && verdictSpread.median > 1;
  const cost =
    median(info.rounds.map((round) => round.after.cpuPerChatAtRate)) -
    median(info.rounds.map((round) => round.before.cpuPerChatAtRate));
  const summary = [
    `Measured ${info.startedAt.toISOString().slice(0, 10)} with \`${info.command}\` (${info.rounds.length} paired rounds, Node ${process.version}; ${info.machine}). ` +
      `Before: ${info.before}. After: ${info.after}. ` +
      `CPU per plain chat (service + PostgreSQL) after / before, under the same load on both at once: **${fmtSpread(verdictSpread)}×** (median [min–max] of the per-round ratios; ${fmt(cost)} ms per chat by the medians); ` +
      `after used more in ${higher} of ${verdictRatios.length} rounds (one-sided sign test p = ${fmt(p)}): ` +
      `**${measurable ? 'a measurable cost' : 'no measurable cost'}** (measurable = p < ${SIGNIFICANCE} and a median ratio above 1).`,
    '',
    '| figure | before | after | after / before |',
    '|---|---|---|---|',
    ...FIGURES.map((figure) => {
      const before = spread(
        info.rounds.map((round) => round.before[figure.key]),
      );
      const after = spread(info.rounds.map((round) => round.after[figure.key]));
      const both =
        figure.better === 'none'
          ? '–'
          : `${fmtSpread(spread(ratios(figure.key)))}×`;
      return `| ${figure.label} | ${fmtSpread(before, figure.unit)} | ${fmtSpread(after, figure.unit)} | ${both} |`;
    }),
  ].join('\n');
  const full = [
    '# This build against an earlier one: what a plain chat costs',
    '',
    'Written by `npm run bench:builds` (bench/compare-builds.ts, see bench/README.md); the whole file is rewritten on every run, and its summary is copied into bench/RESULTS.md.',
    '',
    '| | |',
    '|---|---|',
    `| date | ${info.startedAt.toISOString()} |`,
    `| command | \`${info.command}\` |`,
    `| machine | ${info.machine}, Node ${process.version}, ${info.postgres} |`,
    `| before | ${info.before} |`,
    `| after | ${info.after} |`,
    `| time | ${Math.round(info.totalMs / 1000)} s |`,
    '',
    '## How',
    '',
    '- Both compiled builds (`node dist/main.js` of each checkout, NODE_ENV=production, LOG_LEVEL=info) run at once, each with its own scratch database (their migrations differ) and Redis prefix, the same 200 users and sessions in both; the mock provider and the load generator are processes of their own (bench/processes).',
    `- Every measurement loads both copies at the same time, so the shared machine weighs on both alike. Each round: ${SETTINGS.primeMs / 1000} s of untimed chats on both; then ${SETTINGS.fixedRate.perSecond} chats of \`${SHORT_MODEL.id}\` (3 tokens, no delay) per second on each, on a fixed schedule, for ${SETTINGS.fixedRate.durationMs / 1000} s, and each copy's CPU (its process plus its database's backends, /proc) over its complete 200s: the verdict's figure; then ${SETTINGS.throughput.connections} clients on each back to back (${SETTINGS.throughput.warmupMs / 1000} s warm-up, ${SETTINGS.throughput.durationMs / 1000} s counted); then ${SETTINGS.sequential.requests} chats one at a time on each; then GET /v1/auth/me from ${SETTINGS.me.connections} clients back to back on each (${SETTINGS.me.warmupMs / 1000} s warm-up, ${SETTINGS.me.durationMs / 1000} s counted) and each service's CPU over it. Before each measurement both are quiet (under ${SETTINGS.settle.cpuPercent} % of a core for ${SETTINGS.settle.windowMs / 1000} s) and no mock stream is open. Which copy is the closed loop's first target alternates by round.`,
    `- Verdict: the after / before ratio of the CPU per chat at the fixed rate, per round; a cost is "measurable" when after used more in so many rounds that a one-sided sign test gives p < ${SIGNIFICANCE} and the median ratio is above 1. \`--control\` runs this build on both sides to show the harness's own spread.`,
    '- Figures are `median [min–max]` over rounds; the last column is the median [min–max] of the per-round ratios.',
    '',
    '## Summary',
    '',
    BUILDS_COMPARED.start,
    summary,
    BUILDS_COMPARED.end,
    '',
    '## Rounds',
    '',
    '| round | closed loop first | CPU/chat at rate before (ms) | after (ms) | ratio | PostgreSQL before | after | chats/s before | after | start p50 before (ms) | after (ms) |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...info.rounds.map(
      ({ round, first, before, after }) =>
        `| ${round} | ${first} | ${fmt(before.cpuPerChatAtRate)} | ${fmt(after.cpuPerChatAtRate)} | ${fmt(after.cpuPerChatAtRate / before.cpuPerChatAtRate)} | ${fmt(before.postgresCpuPerChatAtRate)} | ${fmt(after.postgresCpuPerChatAtRate)} | ` +
        `${fmt(before.chatsPerSecond)} | ${fmt(after.chatsPerSecond)} | ${fmt(before.startP50)} | ${fmt(after.startP50)} |`,
    ),
    ...(info.notes.length > 0
      ? ['', '## Notes', '', ...info.notes.map((note) => `- ${note}`)]
      : []),
    '',
  ].join('\n');
  return { full, summary };
}

function commandLine(args: string[]): string {
  return `npm run bench:builds${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
}

async function main(cleanup: CleanupStep[]): Promise<number> {
  const args = process.argv.slice(2);
  const options = parseOptions(args);
  if (options.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const afterDir = options.after ?? REPO;
  const beforeDir = options.control ? afterDir : (options.before ?? afterDir);
  if (options.build && afterDir === REPO) buildThisCheckout(log);
  for (const dir of [beforeDir, afterDir])
    if (!existsSync(join(dir, 'dist', 'main.js')))
      throw new Error(
        `${dir}/dist/main.js is missing: install and build that checkout first (see --help)`,
      );
  const startedAt = new Date();
  const t0 = performance.now();
  const tag = randomBytes(4).toString('hex');
  const { temp, compiled, harnessLog, mockUrl, serverUrl, redisUrl } =
    await startHarness(
      cleanup,
      { tempPrefix: 'chat-bench-builds-', keepTemp: options.keepTemp },
      log,
    );
  const shared = {
    ...serviceEnvironment(mockUrl, redisUrl),
    // Sessions stay cached for the whole run (as in bench:metrics): an expiry mid-measurement would
    // charge one copy database reads the other did not pay.
    SESSION_CACHE_TTL_MS: '3600000',
  };
  const checkouts: Record<Side, string> = {
    before: beforeDir,
    after: afterDir,
  };
  const copies = {} as Record<Side, Copy>;
  let cookies: string[] = [];
  for (const side of SIDES) {
    const db = await createScratchDatabase(serverUrl, `chat_bench_${side}`);
    cleanup.push({ name: `database ${side}`, run: () => db.drop() });
    const prefix = `chat-bench-builds-${tag}-${side}:`;
    cleanup.push({
      name: `redis keys ${side}`,
      run: () => deleteRedisKeys(redisUrl, prefix),
    });
    const catalogFile = join(temp, `catalog-${side}.json`);
    writeBenchCatalog(catalogFile, checkouts[side]);
    const service = new ServiceProcess(
      {
        ...shared,
        DATABASE_URL: db.url,
        REDIS_KEY_PREFIX: prefix,
        CATALOG_FILE: catalogFile,
        STORAGE_DIR: join(temp, `files-${side}`),
        ...(side === 'after' ? options.afterEnv : {}),
      },
      join(temp, `service-${side}.log`),
      t0,
      options.profileDir
        ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`]
        : [],
      checkouts[side],
    );
    cleanup.push({ name: `service ${side}`, run: () => service.stop() });
    await service.start();
    // The same users and sessions in both databases: one cookie list drives both copies.
    cookies =
      cookies.length === 0
        ? await createUsers(db.url, SETTINGS.users, tag)
        : await createUsers(
            db.url,
            SETTINGS.users,
            tag,
            cookies.map((cookie) => cookie.slice('sid='.length)),
          );
    const me = await fetchText(`${service.url}/v1/auth/me`, cookies[0]);
    copies[side] = {
      side,
      service,
      database: db.name,
      meBytes: Buffer.byteLength(me),
    };
  }
  const loadgen = new LoadGeneratorClient(compiled, harnessLog);
  await loadgen.start();
  cleanup.push({ name: 'load generator', run: () => loadgen.stop() });
  const afterEnv = Object.entries(options.afterEnv)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  const describe = {
    before: options.control
      ? `this build (control run)`
      : describeCheckout(beforeDir),
    after: `${describeCheckout(afterDir)}${afterEnv ? ` with ${afterEnv}` : ''}`,
  };
  log(
    `before: ${describe.before} (pid ${copies.before.service.pid}); after: ${describe.after} (pid ${copies.after.service.pid})`,
  );
  const pids = () => SIDES.map((side) => copies[side].service.pid);
  const quiet = () => settle(pids(), mockUrl, SETTINGS.settle);

  log('warm-up');
  for (const side of SIDES)
    await loadgen.chat(
      {
        kind: 'sequential',
        target: chatTarget(copies[side], cookies, 'warm'),
        requests: 50,
      },
      120_000,
    );

  const rounds: RoundFigures[] = [];
  const notes: string[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    for (const side of SIDES)
      if (!isAlive(copies[side].service.pid))
        throw new Error(
          `the ${side} copy exited. Last log lines:\n${copies[side].service.log.tail(20).join('\n')}`,
        );
    const first: Side = round % 2 === 1 ? 'before' : 'after';
    const figures = await measureRound(copies, first, loadgen, cookies, quiet);
    rounds.push({ round, first, ...figures });
    const errors = figures.before.errors + figures.after.errors;
    if (errors > 0)
      notes.push(
        `round ${round}: ${figures.before.errors} requests before and ${figures.after.errors} after were not a complete 200`,
      );
    log(
      `round ${round}: CPU per chat at rate before ${fmt(figures.before.cpuPerChatAtRate)} ms, after ${fmt(figures.after.cpuPerChatAtRate)} ms (ratio ${fmt(figures.after.cpuPerChatAtRate / figures.before.cpuPerChatAtRate)}); chats/s ${fmt(figures.before.chatsPerSecond)} / ${fmt(figures.after.chatsPerSecond)}; start p50 ${fmt(figures.before.startP50)} / ${fmt(figures.after.startP50)} ms; ` +
        `/auth/me ${fmt(figures.before.mePerSecond)} / ${fmt(figures.after.mePerSecond)} per s, service CPU per 1,000 ${fmt(figures.before.serviceCpuPerMe)} / ${fmt(figures.after.serviceCpuPerMe)} ms`,
    );
  }
  for (const side of SIDES) {
    const serious = Object.entries(copies[side].service.log.seriousSince(0));
    if (serious.length > 0)
      notes.push(
        `${side} copy, log lines at warn or above: ${serious.map(([line, count]) => `${count}× ${line}`).join('; ')}`,
      );
  }
  const cpuList = cpus();
  const { full, summary } = render({
    command: commandLine(args),
    startedAt,
    machine: `${cpuList[0]?.model.trim() ?? 'unknown'}, ${cpuList.length} CPUs, Linux ${release()}`,
    postgres: await postgresVersion(serverUrl).catch(
      () => 'PostgreSQL (version unknown)',
    ),
    before: describe.before,
    after: describe.after,
    rounds,
    totalMs: performance.now() - t0,
    notes,
  });
  if (options.control || afterDir !== REPO || options.profileDir || afterEnv) {
    log(
      `${options.control ? 'control run (one build on both sides)' : options.profileDir ? `profiled run (profiles in ${options.profileDir} when the copies stop)` : afterEnv ? 'extra environment on the "after" copy' : 'another checkout as "after"'}: no file written`,
    );
  } else {
    writeFileSync(BUILDS_COMPARED.file, full);
    if (existsSync(RESULTS_FILE))
      writeFileSync(
        RESULTS_FILE,
        withKeptSection(
          BUILDS_COMPARED,
          readFileSync(RESULTS_FILE, 'utf8'),
          summary,
        ),
      );
    log(`wrote ${BUILDS_COMPARED.file} and its summary into ${RESULTS_FILE}`);
  }
  process.stdout.write(`${summary}\n`);
  return 0;
}

runBench(main, log);
