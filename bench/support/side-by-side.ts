/**
 * What the paired benches (bench:metrics, bench:builds) share: two copies of the service measured in the
 * same rounds, quiet before each measurement, their CPU read from /proc around a job.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  compileHarness,
  forkHarness,
  killAllNow,
  REPO,
  stopChild,
} from './children';
import { cpuMs } from './proc';
import { isObject } from './protocol';

export interface SettleSettings {
  /** Every pid under this share of a core ... */
  cpuPercent: number;
  /** ... over this window ... */
  windowMs: number;
  /** ... or give up waiting after this long. */
  maxWaitMs: number;
}

/** Streams the mock provider has open now (0 when it does not answer). */
export async function mockActive(mockUrl: string): Promise<number> {
  try {
    const body: unknown = await (
      await fetch(`${mockUrl}/stats`, { signal: AbortSignal.timeout(5_000) })
    ).json();
    return isObject(body) && typeof body.active === 'number' ? body.active : 0;
  } catch {
    return 0;
  }
}

/** Waits until no mock stream is open and every pid used under the CPU threshold for a window (bounded). */
export async function settle(
  pids: number[],
  mockUrl: string,
  settings: SettleSettings,
): Promise<void> {
  const { cpuPercent, windowMs, maxWaitMs } = settings;
  const started = performance.now();
  for (;;) {
    const before = pids.map(cpuMs);
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const quiet = pids.every(
      (pid, index) =>
        ((cpuMs(pid) - before[index]) / windowMs) * 100 <= cpuPercent,
    );
    if (
      (quiet && (await mockActive(mockUrl)) === 0) ||
      performance.now() - started > maxWaitMs
    )
      return;
  }
}

/** Runs `work`; answers its result and the CPU (ms) each of `cpuOf` used meanwhile. */
export async function withCpu<T>(
  cpuOf: (() => number)[],
  work: () => Promise<T>,
): Promise<{ result: T; cpu: number[] }> {
  const before = cpuOf.map((read) => read());
  const result = await work();
  return { result, cpu: cpuOf.map((read, index) => read() - before[index]) };
}

export interface CleanupStep {
  name: string;
  run: () => Promise<unknown>;
}

/** Runs the steps last-added first, each even when an earlier one failed (logged through `log`). */
export async function runCleanup(
  steps: CleanupStep[],
  log: (message: string) => void,
): Promise<void> {
  for (const step of steps.splice(0).reverse()) {
    try {
      await step.run();
    } catch (error) {
      log(
        `cleanup "${step.name}" failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

/** `npm run build` in this checkout; throws when it fails. */
export function buildThisCheckout(log: (message: string) => void): void {
  log('building the service (npm run build)');
  const build = spawnSync('npm', ['run', 'build'], {
    cwd: REPO,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (build.status !== 0)
    throw new Error(`npm run build failed (exit ${build.status})`);
}

export interface Harness {
  /** The run's temp directory (logs, catalogs), removed at cleanup unless kept. */
  temp: string;
  /** The compiled harness (load generator, mock provider). */
  compiled: string;
  /** File descriptor of harness.log in `temp`. */
  harnessLog: number;
  mockUrl: string;
  /** PostgreSQL server (BENCH_DATABASE_URL) and Redis (BENCH_REDIS_URL). */
  serverUrl: string;
  redisUrl: string;
}

/** A temp directory, the compiled harness and the mock provider, each registered for cleanup. */
export async function startHarness(
  cleanup: CleanupStep[],
  options: { tempPrefix: string; keepTemp: boolean },
  log: (message: string) => void,
): Promise<Harness> {
  const temp = mkdtempSync(join(tmpdir(), options.tempPrefix));
  cleanup.push({
    name: 'temp directory',
    run: () => {
      if (options.keepTemp) log(`kept ${temp}`);
      else rmSync(temp, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
  const compiled = compileHarness(join(temp, 'harness'));
  const harnessLog = openSync(join(temp, 'harness.log'), 'a');
  const mock = await forkHarness(
    compiled,
    'processes/mock-provider.js',
    {},
    harnessLog,
  );
  cleanup.push({ name: 'mock', run: () => stopChild(mock.child) });
  return {
    temp,
    compiled,
    harnessLog,
    mockUrl: `http://127.0.0.1:${mock.ports.mock}`,
    serverUrl:
      process.env.BENCH_DATABASE_URL ??
      'postgresql://postgres@127.0.0.1:5432/postgres',
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  };
}

/**
 * Runs a bench's main with its cleanup: on SIGINT/SIGTERM, on a throw and at the end, the steps it
 * registered run (last first); child processes are killed on exit whatever happens.
 */
export function runBench(
  main: (cleanup: CleanupStep[]) => Promise<number>,
  log: (message: string) => void,
): void {
  const cleanup: CleanupStep[] = [];
  // One cleanup, whichever path gets there first: a signal stops the load generator, which makes main()
  // reject, and both must wait for the same databases to be dropped before the process exits.
  let cleaning: Promise<void> | undefined;
  const cleanUp = () => {
    if (!cleaning) {
      log('cleaning up');
      cleaning = runCleanup(cleanup, log);
    }
    return cleaning;
  };
  const onSignal = () => {
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.on('exit', killAllNow);
  main(cleanup)
    .finally(cleanUp)
    .then(
      (code) => process.exit(code),
      (error: unknown) => {
        log(
          `failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        killAllNow();
        process.exit(1);
      },
    );
}
