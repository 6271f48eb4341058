import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..', '..');

/** The compiled service (`npm run start:prod`) running as a child process, with its output captured. */
export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  output: () => string;
  lines: () => Record<string, unknown>[];
  waitForLine: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
  exited: Promise<number | null>;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export interface StartOptions {
  /** Own process group, so a test can signal the group as a terminal's Ctrl-C does. */
  detached?: boolean;
  /** Node arguments; default: the compiled service, as `npm run start:prod` runs it. */
  args?: string[];
}

/**
 * The environment of a process a test starts: what it names, over the few variables a process needs to
 * run at all (PATH, HOME, TMPDIR). Nothing else of the developer's shell reaches it, and ENV_FILE=none
 * keeps a .env in the checkout out of it too.
 */
export function childEnv(
  env: Record<string, string | undefined>,
): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    ['PATH', 'HOME', 'TMPDIR']
      .filter((name) => process.env[name] !== undefined)
      .map((name) => [name, process.env[name]]),
  );
  return { ...inherited, ENV_FILE: 'none', ...env };
}

export function startService(
  env: Record<string, string | undefined>,
  options: StartOptions = {},
): ServiceProcess {
  const child = spawn(process.execPath, options.args ?? ['dist/main.js'], {
    cwd: ROOT,
    // Extraction only where a test asks for it, over the shared storage (see testEnv).
    env: childEnv({
      LOG_LEVEL: 'info',
      FILE_EXTRACTION_ENABLED: 'false',
      // Jest's workers share the CPU with it: a process not scheduled for a while is not overloaded by its
      // own work (admission tests set their own limit).
      CHAT_ADMISSION_MAX_EVENT_LOOP_DELAY_MS: '60000',
      CHAT_ADMISSION_MAX_EVENT_LOOP_UTILIZATION_PERCENT: '100',
      ...env,
    }),
    detached: options.detached ?? false,
  });
  let output = '';
  child.stdout?.on(
    'data',
    (chunk: Buffer) => (output += chunk.toString('utf8')),
  );
  child.stderr?.on(
    'data',
    (chunk: Buffer) => (output += chunk.toString('utf8')),
  );
  const exited = new Promise<number | null>((done) =>
    child.on('exit', (code) => done(code)),
  );
  return {
    child,
    port: Number(env.PORT),
    output: () => output,
    lines: () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    waitForLine: async (pattern, timeoutMs = 30_000) => {
      await waitFor(
        () => pattern.test(output) || child.exitCode !== null,
        timeoutMs,
        () => `no line matching ${pattern} in:\n${output}`,
      );
      if (!pattern.test(output))
        throw new Error(
          `exited with ${child.exitCode} before a line matching ${pattern}:\n${output}`,
        );
    },
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

export async function waitFor(
  condition: () => boolean,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(describe());
    await new Promise((done) => setTimeout(done, 50));
  }
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
