import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FileKind } from '../file-kind';

/** The extracted text (and a PDF's page count), or why there is none, as a stable code. */
export type Extraction = { ok: true; text: string; pages?: number } | { ok: false; code: string };

/** Plain JavaScript beside this file, in src/ (tests) and dist/ (nest-cli copies it as an asset). */
const WORKER_PATH = join(__dirname, 'text-extraction.worker.mjs');

/**
 * Extracts one file's text in its own worker thread, off the event loop: bounded in time (the worker is
 * terminated) and in memory (V8 heap limits of the worker; running out ends the worker, not the process).
 * Whatever the file does to the parsers ends as a code, never as an exception here.
 */
export function extractText(kind: FileKind, bytes: Uint8Array, limits: { timeoutMs: number; memoryMb: number }): Promise<Extraction> {
  return new Promise((resolve) => {
    let settled = false;
    const worker = new Worker(WORKER_PATH, {
      workerData: { kind, bytes },
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb, maxYoungGenerationSizeMb: Math.min(64, Math.ceil(limits.memoryMb / 4)) },
      // The parsers' own console output is not ours to log.
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    const settle = (result: Extraction) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    };
    const timer = setTimeout(() => settle({ ok: false, code: 'extraction_timeout' }), limits.timeoutMs);
    worker.once('message', (message: Extraction) => settle(message));
    worker.once('error', (error: NodeJS.ErrnoException) => settle({ ok: false, code: error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'extraction_too_large' : 'extraction_failed' }));
    worker.once('exit', () => settle({ ok: false, code: 'extraction_failed' }));
  });
}
