/**
 * `npm run bench`: the chat-at-scale benchmark, as an operator would measure it. Builds the service and runs
 * the compiled service (`node dist/main.js`), a mock OpenAI-compatible provider, a bare relay (the
 * reference) and a load generator, each as its own process; runs every scenario of bench/scenarios.ts
 * against the bare relay and the service in every round; writes bench/RESULTS.md. See bench/README.md.
 *
 * Flags: --quick, --no-build, --check, --rounds N, --only a,c, --keep-temp, --help.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import {
  createScratchDatabase,
  ScratchDatabase,
} from '../scripts/lib/scratch-database';
import {
  Context,
  Measurement,
  SCENARIOS,
  Target,
  TargetName,
} from './scenarios';
import { FULL, QUICK, Settings } from './settings';
import {
  compileHarness,
  forkHarness,
  HarnessChild,
  killAllNow,
  REPO,
  stopChild,
} from './support/children';
import {
  createUsers,
  databaseSummary,
  deleteRedisKeys,
  fetchText,
  postgresVersion,
  serviceEnvironment,
  SHORT_MODEL,
  writeBenchCatalog,
} from './support/environment';
import { LoadGeneratorClient } from './support/loadgen-client';
import { cpuMs, isAlive, postgresCpuMs } from './support/proc';
import { isObject } from './support/protocol';
import {
  renderResults,
  RunInfo,
  ScenarioRecord,
  targetOutcomes,
} from './support/report';
import { httpOk, ServiceProcess } from './support/service-process';

const RESULTS_FILE = join(REPO, 'bench', 'RESULTS.md');

interface Options {
  quick: boolean;
  build: boolean;
  check: boolean;
  rounds: number | undefined;
  only: string[] | undefined;
  keepTemp: boolean;
  /** Directory for the service's V8 CPU profiles (node --cpu-prof), written when it stops. */
  profileDir: string | undefined;
  help: boolean;
}

const HELP = `npm run bench [-- flags]
  --quick        1 round, smaller sizes (under 5 minutes) for daily work
  --no-build     do not run \`npm run build\` first (dist/ must be current)
  --check        exit non-zero when a target fails (default: exit 0 whatever the results)
  --rounds N     rounds (default 3, quick 1)
  --only a,c     run only these scenarios (RESULTS.md then holds only them)
  --keep-temp    keep the temp directory (service and harness logs, catalog)
  --profile DIR  run the service and the bare relay with node --cpu-prof, profiles into DIR (open in Chrome DevTools); the
                 profiler costs CPU, so the run's figures are not comparable: use with --only
  --help         this text
Environment: BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres),
             BENCH_REDIS_URL (default redis://127.0.0.1:6379)`;

function parseOptions(args: string[]): Options {
  const options: Options = {
    quick: false,
    build: true,
    check: false,
    rounds: undefined,
    only: undefined,
    keepTemp: false,
    profileDir: undefined,
    help: false,
  };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--no-build') options.build = false;
    else if (arg === '--check') options.check = true;
    else if (arg === '--keep-temp') options.keepTemp = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '--rounds') options.rounds = Number(args[++index]);
    else if (arg.startsWith('--rounds='))
      options.rounds = Number(arg.slice('--rounds='.length));
    else if (arg === '--profile')
      options.profileDir = resolvePath(args[++index] ?? '.');
    else if (arg === '--only') options.only = (args[++index] ?? '').split(',');
    else if (arg.startsWith('--only='))
      options.only = arg.slice('--only='.length).split(',');
    else throw new Error(`unknown argument ${arg} (see --help)`);
  }
  if (
    options.rounds !== undefined &&
    !(Number.isInteger(options.rounds) && options.rounds >= 1)
  )
    throw new Error('--rounds wants a whole number ≥ 1');
  return options;
}

function log(message: string): void {
  const at = new Date().toISOString().slice(11, 19);
  process.stdout.write(`[bench ${at}] ${message}\n`);
}

/** Cleanup steps, run last-in first-out exactly once (normal end, error, Ctrl-C). */
class Cleanup {
  private readonly steps: { name: string; run: () => Promise<unknown> }[] = [];
  private running: Promise<void> | undefined;

  add(name: string, run: () => Promise<unknown>): void {
    this.steps.push({ name, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (error) {
          log(
            `cleanup "${step.name}" failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    })();
    return this.running;
  }
}

async function mockStats(mockUrl: string): Promise<Record<string, number>> {
  const res = await fetch(`${mockUrl}/stats`, {
    signal: AbortSignal.timeout(5_000),
  });
  const body: unknown = await res.json();
  const stats: Record<string, number> = {};
  if (isObject(body))
    for (const [key, value] of Object.entries(body))
      if (typeof value === 'number') stats[key] = value;
  return stats;
}

interface Settled {
  settled: boolean;
  waitedMs: number;
  /** The pids still above the CPU threshold when it gave up. */
  busy: number[];
  /** Mock streams still open when it gave up. */
  mockActive: number;
}

/**
 * Waits until no mock stream is open and every pid used under `cpuPercent` of a core over the last
 * `windowMs`, for at most `maxWaitMs`.
 */
async function settle(
  pids: number[],
  mockUrl: string,
  s: Settings['settle'],
): Promise<Settled> {
  const started = performance.now();
  const samples: { at: number; cpu: number[] }[] = [];
  for (;;) {
    const at = performance.now();
    const cpu = pids.map(cpuMs);
    samples.push({ at, cpu });
    while (samples.length > 1 && samples[1].at <= at - s.windowMs)
      samples.shift();
    const oldest = samples[0];
    const full = at - oldest.at >= s.windowMs;
    const busy = pids.filter(
      (_, index) =>
        !full ||
        ((cpu[index] - oldest.cpu[index]) / (at - oldest.at)) * 100 >
          s.cpuPercent,
    );
    const mockActive =
      busy.length === 0 || at - started > s.maxWaitMs
        ? await mockStats(mockUrl).then(
            (stats) => stats.active ?? 0,
            () => 0,
          )
        : -1;
    if (busy.length === 0 && mockActive === 0)
      return { settled: true, waitedMs: at - started, busy, mockActive };
    if (at - started > s.maxWaitMs)
      return { settled: false, waitedMs: at - started, busy, mockActive };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Waits (at most `limitMs`) until the mock has no open stream: the targets' upstream work is over. */
async function drainMock(mockUrl: string, limitMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    const active = await mockStats(mockUrl).then(
      (stats) => stats.active ?? 0,
      () => 0,
    );
    if (active === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return performance.now() - started;
}

async function redisVersion(url: string): Promise<string> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    const info = await redis.info('server');
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } finally {
    redis.disconnect();
  }
}

function commandLine(args: string[]): string {
  if (process.env.npm_lifecycle_event === 'bench')
    return `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
  return `ts-node --transpile-only bench/run.ts${args.length > 0 ? ` ${args.join(' ')}` : ''}`;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const options = parseOptions(args);
  if (options.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const base = options.quick ? QUICK : FULL;
  const settings: Settings = { ...base, rounds: options.rounds ?? base.rounds };
  const scenarios = SCENARIOS.filter(
    (scenario) => !options.only || options.only.includes(scenario.id),
  );
  if (scenarios.length === 0)
    throw new Error(
      `--only matched no scenario (there are ${SCENARIOS.map((s) => s.id).join(', ')})`,
    );
  const startedAt = new Date();
  const t0 = performance.now();
  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    log(`${signal}: stopping every child process and cleaning up`);
    void cleanup.run().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);

  try {
    let buildMs: number | undefined;
    if (options.build) {
      log('building the service (npm run build)');
      const buildStarted = performance.now();
      const build = spawnSync('npm', ['run', 'build'], {
        cwd: REPO,
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      if (build.status !== 0)
        throw new Error(`npm run build failed (exit ${build.status})`);
      buildMs = performance.now() - buildStarted;
    }
    if (!existsSync(join(REPO, 'dist', 'main.js')))
      throw new Error('dist/main.js is missing: run without --no-build');

    const tag = randomBytes(4).toString('hex');
    const temp = mkdtempSync(join(tmpdir(), 'chat-bench-'));
    cleanup.add('remove the temp directory', () => {
      if (options.keepTemp) log(`kept ${temp}`);
      else rmSync(temp, { recursive: true, force: true });
      return Promise.resolve();
    });
    const compiled = compileHarness(join(temp, 'harness'));
    const harnessLog = openSync(join(temp, 'harness.log'), 'a');

    const serverUrl =
      process.env.BENCH_DATABASE_URL ??
      'postgresql://postgres@127.0.0.1:5432/postgres';
    const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const redisPrefix = `chat-bench-${tag}:`;
    const db: ScratchDatabase = await createScratchDatabase(
      serverUrl,
      'chat_bench',
    );
    cleanup.add(`drop database ${db.name}`, () => db.drop());
    cleanup.add(`delete Redis keys ${redisPrefix}*`, async () =>
      log(`deleted ${await deleteRedisKeys(redisUrl, redisPrefix)} Redis keys`),
    );
    const catalogFile = join(temp, 'catalog.json');
    writeBenchCatalog(catalogFile);
    log(
      `scratch database ${db.name}, Redis prefix ${redisPrefix}, temp ${temp}`,
    );

    const mock = await forkHarness(
      compiled,
      'processes/mock-provider.js',
      {},
      harnessLog,
    );
    cleanup.add('stop the mock provider', () => stopChild(mock.child));
    const mockUrl = `http://127.0.0.1:${mock.ports.mock}`;

    const serviceLogFile = join(temp, 'service.log');
    // The bare relay is profiled too, so the two profiles of the same load can be compared.
    const profileArgs = options.profileDir
      ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`]
      : [];
    const service = new ServiceProcess(
      {
        ...serviceEnvironment(mockUrl, redisUrl),
        DATABASE_URL: db.url,
        REDIS_KEY_PREFIX: redisPrefix,
        CATALOG_FILE: catalogFile,
        STORAGE_DIR: join(temp, 'files'),
      },
      serviceLogFile,
      t0,
      profileArgs,
    );
    // Stopped before the database is dropped (cleanup runs in reverse).
    cleanup.add('stop the service', () => service.stop());
    await service.start();
    const serviceLog = service.log;
    log(`service pid ${service.pid} on ${service.url}, log ${serviceLogFile}`);

    const cookies = await createUsers(db.url, settings.users, tag);
    const fixtures = {
      plans: await fetchText(`${service.url}/v1/plans`),
      me: await fetchText(`${service.url}/v1/auth/me`, cookies[0]),
    };
    const fixturesFile = join(temp, 'fixtures.json');
    writeFileSync(fixturesFile, JSON.stringify(fixtures));
    const bare: HarnessChild = await forkHarness(
      compiled,
      'processes/bare-relay.js',
      {
        MOCK_URL: `${mockUrl}/v1`,
        CATALOG_FILE: catalogFile,
        FIXTURES_FILE: fixturesFile,
      },
      harnessLog,
      profileArgs,
    );
    cleanup.add('stop the bare relay', () => stopChild(bare.child));
    const loadgen = new LoadGeneratorClient(compiled, harnessLog);
    await loadgen.start();
    cleanup.add('stop the load generator', () => loadgen.stop());
    log(
      `mock pid ${mock.pid}, bare relay pid ${bare.pid}, load generator pid ${loadgen.pid}; ${settings.users} users`,
    );

    const targets: Record<TargetName, Target> = {
      bare: {
        name: 'bare',
        pid: bare.pid,
        chatUrl: `http://127.0.0.1:${bare.ports.relay}`,
        restUrl: `http://127.0.0.1:${bare.ports.express}`,
        // The same request bytes as the service gets; the relay ignores the cookie, /v1/auth/me checks its shape.
        cookies,
        alive: async () =>
          isAlive(bare.pid) &&
          (await httpOk(`http://127.0.0.1:${bare.ports.express}/v1/plans`)),
      },
      service: {
        name: 'service',
        pid: service.pid,
        chatUrl: service.url,
        restUrl: service.url,
        cookies,
        database: db.name,
        alive: () => service.alive(),
      },
    };
    let unsettled = 0;
    const otherLoad: number[] = [];
    const ctx: Context = {
      settings,
      mockPid: mock.pid,
      cores: cpus().length,
      otherLoad,
      ownCpuMs: () =>
        [process.pid, mock.pid, bare.pid, loadgen.pid, service.pid].reduce(
          (total, pid) => total + (cpuMs(pid) || 0),
          0,
        ) + postgresCpuMs(db.name),
      loadgen,
      runTag: tag,
      fixtures,
      settle: async () => {
        const result = await settle(
          [bare.pid, service.pid],
          mockUrl,
          settings.settle,
        );
        if (!result.settled) unsettled += 1;
        return result.waitedMs;
      },
      drain: () => drainMock(mockUrl, 5_000),
    };
    /** Short chats (one at a time, then 50 at once) and half a second of each GET: JIT, pools, caches. */
    const warmUp = async (target: Target, gets = true) => {
      const warm = (label: string, deadlineMs: number) => ({
        baseUrl: target.chatUrl,
        model: SHORT_MODEL.id,
        tokens: 3,
        intervalMs: 0,
        cookies: target.cookies,
        keyPrefix: `warm-${label}-${tag}-${target.name}-${randomBytes(3).toString('hex')}`,
        deadlineMs,
        fastRefusalMs: 1_000,
      });
      await loadgen.chat(
        { kind: 'sequential', target: warm('seq', 10_000), requests: 30 },
        120_000,
      );
      await loadgen.chat(
        { kind: 'burst', target: warm('burst', 20_000), requests: 50 },
        60_000,
      );
      for (const path of gets ? ['/v1/plans', '/v1/auth/me'] : []) {
        await loadgen.rate(
          {
            kind: 'requestRate',
            baseUrl: target.restUrl,
            path,
            cookies,
            connections: 10,
            warmupMs: 0,
            durationMs: 500,
            expectedBytes: 0,
          },
          30_000,
        );
      }
    };
    /** A service still busy with an earlier measurement's leftovers is started afresh (and warmed up) instead. */
    const restartService = async (reason: string) => {
      log(`restarting the service: ${reason}`);
      await service.restart();
      Object.assign(targets.service, {
        pid: service.pid,
        chatUrl: service.url,
        restUrl: service.url,
      });
      await warmUp(targets.service, false);
    };

    // Warm-up (not recorded): JIT, connection pools, caches of both targets.
    log('warm-up');
    for (const target of Object.values(targets)) await warmUp(target);
    const setupMs = performance.now() - t0 - (buildMs ?? 0);

    const records: ScenarioRecord[] = scenarios.map((scenario) => ({
      scenario,
      rounds: [],
    }));
    const errors: string[] = [];
    const restartedBefore = new Set<string>();
    let pendingRestartNote: string | undefined;
    const runStarted = performance.now();
    let lastRound = 0;
    for (let round = 1; round <= settings.rounds; round++) {
      const roundStarted = performance.now();
      // Round 1 is the longest (scenario b searches from scratch): the previous round is a fair guess of the next.
      if (round > 1 && roundStarted - t0 + lastRound > settings.budgetMs) {
        const message = `round${round < settings.rounds ? `s ${round}-${settings.rounds}` : ` ${round}`} skipped: another round (the last took ${Math.round(lastRound / 1000)} s) would end past the ${settings.budgetMs / 60_000}-minute budget`;
        errors.push(message);
        log(message);
        break;
      }
      for (const [index, record] of records.entries()) {
        const alternating: TargetName[] =
          (round + index) % 2 === 1 ? ['bare', 'service'] : ['service', 'bare'];
        const order = alternating.filter(
          (name) =>
            !record.scenario.targets || record.scenario.targets.includes(name),
        );
        const entry: ScenarioRecord['rounds'][number] = { round, order };
        record.rounds.push(entry);
        for (const name of order) {
          if (interrupted) throw new Error('interrupted');
          const target = targets[name];
          const label = `round ${round}/${settings.rounds} ${record.scenario.id}. ${record.scenario.title} — ${name}`;
          if (
            name === 'service' &&
            !(await service.ensureRunning().catch(() => false)) &&
            isAlive(service.pid)
          ) {
            Object.assign(target, {
              pid: service.pid,
              chatUrl: service.url,
              restUrl: service.url,
            });
            log(
              `the service had exited; started it again (pid ${service.pid})`,
            );
            restartedBefore.add(`${round}.${record.scenario.id}`);
          }
          if (!isAlive(target.pid)) {
            entry[name] = {
              values: {},
              problems: {},
              notes: [],
              failed: `the ${name} process is gone`,
            };
            log(`${label}: skipped, the process is gone`);
            continue;
          }
          unsettled = 0;
          let settled = await settle(
            [bare.pid, service.pid],
            mockUrl,
            settings.settle,
          );
          let restartNote = pendingRestartNote;
          pendingRestartNote = undefined;
          if (
            !settled.settled &&
            (settled.busy.includes(service.pid) || settled.mockActive > 0)
          ) {
            const why = `still busy ${Math.round(settled.waitedMs / 1000)} s after the previous measurement (${settled.busy.includes(service.pid) ? 'CPU' : ''}${settled.busy.includes(service.pid) && settled.mockActive > 0 ? ', ' : ''}${settled.mockActive > 0 ? `${settled.mockActive} upstream streams open` : ''})`;
            await restartService(why);
            restartNote = `the service was ${why} and was restarted (and warmed up) before this measurement`;
            settled = await settle(
              [bare.pid, service.pid],
              mockUrl,
              settings.settle,
            );
          }
          if (!settled.settled) unsettled += 1;
          const waited = settled.waitedMs;
          const logMark = serviceLog.mark();
          log(`${label} (settled after ${Math.round(waited)} ms)`);
          let measurement: Measurement;
          try {
            measurement = await record.scenario.run(ctx, target, round);
          } catch (error) {
            const message =
              error instanceof Error ? error.message : String(error);
            measurement = {
              values: {},
              problems: {},
              notes: [],
              failed: message,
            };
            errors.push(`${label}: ${message}`);
            log(`${label}: FAILED: ${message}`);
          }
          if (restartNote) measurement.notes.push(restartNote);
          if (unsettled > 0)
            measurement.notes.push(
              `${unsettled} wait(s) for quiet targets gave up after ${settings.settle.maxWaitMs / 1000} s`,
            );
          if (name === 'service')
            measurement.logs = serviceLog.seriousSince(logMark);
          if (
            name === 'service' &&
            restartedBefore.has(`${round}.${record.scenario.id}`)
          )
            measurement.notes.push(
              'the service had exited before this measurement and was started again (see "Service exits")',
            );
          entry[name] = measurement;
          log(
            `  ${Object.entries(measurement.values)
              .map(
                ([key, value]) =>
                  `${key}=${Number.isFinite(value) ? Math.round(value * 100) / 100 : value}`,
              )
              .join(' ')}`,
          );
          if (Object.keys(measurement.problems).length > 0)
            log(
              `  problems: ${JSON.stringify(measurement.problems).slice(0, 400)}`,
            );
          // A service still streaming upstream 2 s after its measurement is working through requests whose clients
          // left (the burst scenarios): restart it now rather than wait for it before the next measurement.
          const last =
            round === settings.rounds &&
            index === records.length - 1 &&
            name === order[order.length - 1];
          if (
            name === 'service' &&
            !last &&
            isAlive(service.pid) &&
            (await drainMock(mockUrl, 2_000)) >= 2_000
          ) {
            const active = await mockStats(mockUrl).then(
              (stats) => stats.active ?? 0,
              () => 0,
            );
            if (active > 0) {
              await restartService(
                `${active} upstream streams still open after the measurement`,
              );
              pendingRestartNote = `the service was restarted (and warmed up) before this measurement: ${active} upstream streams were still open 2 s after the previous one`;
            }
          }
          if (name === 'service' && !isAlive(service.pid))
            log(
              `the service exited during this measurement. Last log lines:\n${serviceLog.tail(20).join('\n')}`,
            );
        }
      }
      lastRound = performance.now() - roundStarted;
      log(
        `round ${round} took ${Math.round((performance.now() - roundStarted) / 1000)} s`,
      );
    }
    const runMs = performance.now() - runStarted;

    const database = await databaseSummary(db.url).catch(() => undefined);
    const finalMockStats = await mockStats(mockUrl).catch(() => undefined);
    const cpuList = cpus();
    const info: RunInfo = {
      startedAt,
      command: commandLine(args),
      settings,
      machine: {
        cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
        cpus: cpuList.length,
        ramBytes: totalmem(),
        kernel: release(),
        node: process.version,
        postgres: await postgresVersion(db.url).catch(() => 'unknown'),
        redis: await redisVersion(redisUrl).catch(() => 'unknown'),
      },
      buildMs,
      setupMs,
      runMs,
      totalMs: performance.now() - t0,
      records,
      serviceLog: serviceLog.seriousSince(0),
      otherLoad,
      serviceExits: service.exits,
      serviceStarts: service.starts,
      database,
      mockStats: finalMockStats,
      errors,
    };
    writeFileSync(RESULTS_FILE, renderResults(info));
    const outcomes = targetOutcomes(records);
    const failed = outcomes.filter((outcome) => outcome.verdict?.pass !== true);
    log(`wrote ${RESULTS_FILE}`);
    log(
      `${outcomes.length - failed.length} of ${outcomes.length} targets pass${failed.length > 0 ? `; failing: ${failed.map((outcome) => outcome.key).join(', ')}` : ''}`,
    );
    log(`took ${Math.round((performance.now() - t0) / 1000)} s`);
    return options.check && (failed.length > 0 || errors.length > 0) ? 1 : 0;
  } finally {
    log('cleaning up');
    await cleanup.run();
  }
}

process.on('exit', killAllNow);
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    killAllNow();
    process.exit(1);
  },
);
