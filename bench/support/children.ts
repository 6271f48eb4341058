/**
 * The bench's child processes: the harness processes (mock provider, bare relay, load generator) compiled
 * from TypeScript to plain JavaScript once per run, so they run on `node` alone (no ts-node, no TypeScript
 * compiler in their heap), and the service itself (`node dist/main.js`). Every child is killed on exit.
 */
import { ChildProcess, fork, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { isObject, ReadyMessage } from './protocol';

export const REPO = resolve(__dirname, '..', '..');
const BENCH = join(REPO, 'bench');

/** Harness sources run as child processes, and what they import. */
const HARNESS_FILES = [
  'processes/mock-provider.ts',
  'processes/bare-relay.ts',
  'processes/load-generator.ts',
  'support/protocol.ts',
  'support/tokens.ts',
];

/** Transpiles the harness processes into `outDir` (same layout); returns the directory. */
export function compileHarness(outDir: string): string {
  for (const file of HARNESS_FILES) {
    const source = readFileSync(join(BENCH, file), 'utf8');
    const output = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        sourceMap: false,
      },
    });
    const target = join(outDir, file.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output.outputText);
  }
  return outDir;
}

const children = new Set<ChildProcess>();

/** Every child still running gets SIGKILL (synchronous: usable from an 'exit' handler). */
export function killAllNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null)
      child.kill('SIGKILL');
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

export interface HarnessChild {
  child: ChildProcess;
  pid: number;
  ports: Record<string, number>;
}

/**
 * Forks a compiled harness process (IPC channel) and waits for its `ready` message. Its output goes to the
 * given log file descriptor. NODE_PATH lets the compiled files outside the repo find node_modules.
 */
export function forkHarness(
  compiledDir: string,
  file: string,
  env: Record<string, string>,
  logFd: number,
  execArgv: string[] = [],
  timeoutMs = 30_000,
): Promise<HarnessChild> {
  const script = join(compiledDir, file);
  const child = fork(script, [], {
    cwd: REPO,
    env: { ...baseEnv(), NODE_PATH: join(REPO, 'node_modules'), ...env },
    // Plain node: fork() would otherwise pass on the orchestrator's execArgv, and ts-node puts itself there.
    execPath: process.execPath,
    execArgv,
    stdio: ['ignore', logFd, logFd, 'ipc'],
    serialization: 'advanced',
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((resolveReady, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `${relative(compiledDir, script)} did not get ready within ${timeoutMs} ms`,
          ),
        ),
      timeoutMs,
    );
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${relative(compiledDir, script)} exited before it was ready (code ${code}, signal ${signal})`,
        ),
      );
    };
    child.once('exit', onExit);
    child.on('message', function onMessage(message: unknown) {
      if (!isReady(message)) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('message', onMessage);
      resolveReady({ child, pid: child.pid ?? -1, ports: message.ports });
    });
  });
}

function isReady(message: unknown): message is ReadyMessage {
  return (
    isObject(message) && message.type === 'ready' && isObject(message.ports)
  );
}

/**
 * Starts `node <script>` in the repository (or in `cwd`, another checkout) with exactly `env` (plus
 * PATH/HOME/LANG/TZ), output to `logFd`.
 */
export function spawnNode(
  script: string,
  env: Record<string, string>,
  logFd: number,
  nodeArgs: string[] = [],
  cwd: string = REPO,
): ChildProcess {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd,
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', logFd, logFd],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** What every child inherits from the bench's own environment; nothing else (no stray DATABASE_URL etc.). */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
