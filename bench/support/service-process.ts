/**
 * The service under test: `node dist/main.js` with NODE_ENV=production, its output appended to a log file.
 * Every exit that the bench did not ask for is recorded (code, signal, last log lines); `ensureRunning()`
 * starts it again (on a new port) so the remaining measurements can still be taken, and the report says so.
 */
import { ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { REPO, spawnNode, stopChild } from './children';
import { isAlive } from './proc';
import { isObject } from './protocol';
import { ServiceLog } from './service-log';

export interface ServiceExit {
  /** Seconds since the bench started. */
  atSeconds: number;
  code: number | null;
  signal: string | null;
  lastLines: string[];
}

export class ServiceProcess {
  private child: ChildProcess | undefined;
  private stopping = false;
  readonly exits: ServiceExit[] = [];
  readonly log: ServiceLog;
  url = '';
  pid = -1;
  /** Times started (1 + restarts). */
  starts = 0;

  constructor(
    private readonly env: Record<string, string>,
    logFile: string,
    private readonly t0: number,
    /** Options for node itself (before the script), e.g. --cpu-prof. */
    private readonly nodeArgs: string[] = [],
    /** The checkout whose dist/main.js runs (another build than this one's in bench:builds). */
    private readonly cwd: string = REPO,
  ) {
    this.log = new ServiceLog(logFile);
  }

  async start(): Promise<void> {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    const child = spawnNode(
      'dist/main.js',
      { ...this.env, PORT: String(port) },
      openSync(this.log.file, 'a'),
      this.nodeArgs,
      this.cwd,
    );
    this.child = child;
    this.pid = child.pid ?? -1;
    this.starts += 1;
    child.once('exit', (code, signal) => {
      if (this.stopping) return;
      this.exits.push({
        atSeconds: Math.round((performance.now() - this.t0) / 1000),
        code,
        signal,
        lastLines: this.log.tail(40),
      });
    });
    await this.waitForReady(120_000);
  }

  /** True when it was running; otherwise starts it again and returns false. */
  async ensureRunning(): Promise<boolean> {
    if (isAlive(this.pid)) return true;
    await this.start();
    return false;
  }

  /** Stops it (SIGTERM, SIGKILL after 1 s: it is stuck anyway) and starts a fresh one on a new port; not counted as an exit. */
  async restart(): Promise<void> {
    this.stopping = true;
    if (this.child) await stopChild(this.child, 1_000);
    this.stopping = false;
    await this.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.child) await stopChild(this.child, 5_000);
  }

  /** The process exists and answers GET /v1/health/live within 5 s. */
  async alive(): Promise<boolean> {
    return isAlive(this.pid) && (await httpOk(`${this.url}/v1/health/live`));
  }

  private async waitForReady(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if (!isAlive(this.pid))
        throw new Error(
          `the service exited during start-up. Last log lines:\n${this.log.tail(30).join('\n')}`,
        );
      if (await httpOk(`${this.url}/v1/health/ready`, 2_000)) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(
      `the service was not ready within ${timeoutMs} ms. Last log lines:\n${this.log.tail(30).join('\n')}`,
    );
  }
}

export async function httpOk(url: string, timeoutMs = 5_000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port =
        isObject(address) && typeof address.port === 'number'
          ? address.port
          : 0;
      server.close(() => resolve(port));
    });
  });
}
