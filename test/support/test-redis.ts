import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  findExecutable,
  Installer,
  installWithApt,
  SetupFailure,
} from './run-tools';

/** The Redis a run uses, and how to stop it when the run started it. */
export interface RunRedis {
  url: string;
  stop: () => Promise<void>;
}

const REDIS_PATHS = ['/usr/bin/redis-server', '/usr/sbin/redis-server'];
const NO_REDIS =
  'The suite needs Redis: install redis-server (Debian: apt-get install redis-server; the run does it itself as root), or set REDIS_URL=redis://host:port for the run to use.';

/**
 * The run's Redis: REDIS_URL when the run is given one (CI passes the machine's), else a redis-server of
 * the run's own on a free loopback port, keeping nothing on disk, stopped by global-teardown. Suites keep
 * apart by key prefix either way.
 */
export async function provideRedis(
  port: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunRedis> {
  if (env.REDIS_URL)
    return { url: env.REDIS_URL, stop: () => Promise.resolve() };
  const binary = provideRedisServer(env);
  const dir = mkdtempSync(join(tmpdir(), 'chat-test-redis-'));
  const child = spawnRedisServer(binary, port, dir);
  const stop = async () => {
    await kill(child);
    rmSync(dir, { recursive: true, force: true });
  };
  // A run that dies without its teardown must not leave the server behind.
  process.once('exit', () => child.kill('SIGKILL'));
  try {
    await waitForPong(port, child, 15_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, stop };
}

/** A redis-server on loopback at `port` that keeps nothing on disk (its working directory: `dir`). */
export function spawnRedisServer(
  binary: string,
  port: number,
  dir = tmpdir(),
): ChildProcess {
  const args = ['--port', String(port), '--bind', '127.0.0.1'];
  args.push('--save', '', '--appendonly', 'no', '--dir', dir);
  return spawn(binary, args, { stdio: 'ignore' });
}

/** redis-server: on PATH, else installed now (as root with apt-get); the run stops when there is none. */
export function provideRedisServer(
  env: NodeJS.ProcessEnv = process.env,
  install: Installer = installWithApt,
  paths: string[] = REDIS_PATHS,
): string {
  const found = findExecutable(['redis-server'], paths, env);
  if (found) return found;
  if (install('ensure-redis.sh')) {
    const installed = findExecutable(['redis-server'], paths, env);
    if (installed) return installed;
  }
  throw new SetupFailure(NO_REDIS);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((done) => {
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** Resolves once the server at `port` answers PING; rejects if it exits or stays silent past `timeoutMs`. */
async function waitForPong(
  port: number,
  child: ChildProcess,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new SetupFailure(
        `redis-server exited with ${child.exitCode} at start. ${NO_REDIS}`,
      );
    if (await pings(port)) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new SetupFailure(
    `redis-server did not answer within ${timeoutMs} ms. ${NO_REDIS}`,
  );
}

function pings(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const finish = (answer: boolean) => {
      socket.destroy();
      done(answer);
    };
    socket.setTimeout(1_000, () => finish(false));
    socket.on('error', () => finish(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => finish(data.toString().startsWith('+PONG')));
  });
}

/** The run's Redis URL, set by global-setup (always: the suite never runs without Redis). */
export function runRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url)
    throw new Error(
      'TEST_REDIS_URL is not set: run the tests through jest (global-setup provides Redis)',
    );
  return url;
}
