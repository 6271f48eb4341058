import { fork } from 'node:child_process';
import { join } from 'node:path';
import { FileKind } from '../file-kind';

/** The extracted text (and a PDF's page count), or why there is none, as a stable code. */
export type Extraction =
  { ok: true; text: string; pages?: number } | { ok: false; code: string };

/** Plain JavaScript beside this file, in src/ (tests) and dist/ (nest-cli copies it as an asset). */
const CHILD_PATH = join(__dirname, 'text-extraction.child.mjs');

/**
 * Extracts one file's text in a child process of its own, off the event loop and out of the service's
 * memory: bounded in time (killed at the deadline or when `signal` aborts) and in heap
 * (`--max-old-space-size`); whatever a crafted file makes the parsers allocate ends that process only.
 * Every outcome is a code, never an exception here.
 */
export function extractText(
  kind: FileKind,
  bytes: Buffer,
  limits: { timeoutMs: number; memoryMb: number },
  signal?: AbortSignal,
): Promise<Extraction> {
  return new Promise((resolve) => {
    let settled = false;
    const child = fork(CHILD_PATH, [], {
      execArgv: [`--max-old-space-size=${limits.memoryMb}`],
      serialization: 'advanced',
      // The parsers' own console output is not ours to log.
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const settle = (result: Extraction) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      if (child.exitCode === null && child.signalCode === null)
        child.kill('SIGKILL');
      resolve(result);
    };
    const stop = () => settle({ ok: false, code: 'extraction_stopped' });
    const timer = setTimeout(
      () => settle({ ok: false, code: 'extraction_timeout' }),
      limits.timeoutMs,
    );
    signal?.addEventListener('abort', stop, { once: true });
    child.once('message', (message: Extraction) => settle(message));
    child.once('error', () => settle({ ok: false, code: 'extraction_failed' }));
    // V8 aborts a process out of heap (SIGABRT, or exit code 134 through a shell).
    child.once('exit', (code, signalName) =>
      settle({
        ok: false,
        code:
          signalName === 'SIGABRT' || code === 134
            ? 'extraction_too_large'
            : 'extraction_failed',
      }),
    );
    child.send({ kind, bytes }, (error) => {
      if (error) settle({ ok: false, code: 'extraction_failed' });
    });
  });
}
