import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppError, FieldError } from '../common/errors/app-error';
import { AppLogger } from '../common/logging/app-logger';

export type SchemaJob =
  | { op: 'check'; field: string; schema: unknown }
  | {
      op: 'validate';
      field: string;
      schema: unknown;
      value: unknown;
      cacheKey: string;
    };

type WorkerMessage =
  { type: 'ready' } | { type: 'result'; problems: FieldError[] };
type Outcome =
  | { ok: true; problems: FieldError[] }
  | { ok: false; reason: 'timeout' | 'crashed' };

/** Compiling a schema (create, import, publish) and checking one input against it (run) may take this long. */
const CHECK_TIMEOUT_MS = 2_000;
const VALIDATE_TIMEOUT_MS = 1_000;
/** A schema that needs more memory than this to compile or apply is refused. */
const WORKER_LIMITS = {
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
};
const STARTUP_TIMEOUT_MS = 30_000;

/**
 * User-supplied JSON Schemas run in one worker thread, one job at a time, each with a time budget. A job
 * over budget (a catastrophic `pattern`, `uniqueItems` over a huge array, a schema that compiles into
 * megabytes of code) kills the worker, is answered as too complex, and the next job gets a fresh worker.
 * The event loop that serves HTTP never runs user schemas.
 * docs/adr/0040-skill-json-schemas.md
 */
@Injectable()
export class JsonSchemaService implements OnModuleDestroy {
  private worker: Promise<Worker> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly log: AppLogger) {}

  async schemaProblems(field: string, schema: unknown): Promise<FieldError[]> {
    const outcome = await this.run(
      { op: 'check', field, schema },
      CHECK_TIMEOUT_MS,
    );
    if (outcome.ok) return outcome.problems;
    return [
      {
        field,
        code: 'schema_too_complex',
        message: `${field} is too complex: it could not be compiled within ${CHECK_TIMEOUT_MS} ms and 256 MB`,
      },
    ];
  }

  /** Checks the schemas present (null and undefined mean none); 400 naming each problem. */
  async assertValidSchemas(schemas: {
    input_schema?: unknown;
    output_schema?: unknown;
  }): Promise<void> {
    const problems: FieldError[] = [];
    for (const field of ['input_schema', 'output_schema'] as const) {
      if (schemas[field] !== undefined && schemas[field] !== null)
        problems.push(...(await this.schemaProblems(field, schemas[field])));
    }
    if (problems.length > 0) {
      throw new AppError(
        'validation_failed',
        `Invalid JSON Schema: ${[...new Set(problems.map((problem) => problem.message))].slice(0, 5).join('; ')}.`,
        { errors: problems },
      );
    }
  }

  async valueProblems(
    field: string,
    schema: unknown,
    value: unknown,
    cacheKey: string,
  ): Promise<FieldError[]> {
    const outcome = await this.run(
      { op: 'validate', field, schema, value, cacheKey },
      VALIDATE_TIMEOUT_MS,
    );
    if (outcome.ok) return outcome.problems;
    return [
      {
        field,
        code: 'input_too_complex',
        message: `${field} could not be checked against the input_schema within ${VALIDATE_TIMEOUT_MS} ms`,
      },
    ];
  }

  async onModuleDestroy(): Promise<void> {
    await this.discard();
  }

  /** One job at a time: the budget of a job is its own, never spent waiting behind another. */
  private run(job: SchemaJob, timeoutMs: number): Promise<Outcome> {
    const outcome = this.queue.then(() => this.execute(job, timeoutMs));
    this.queue = outcome.catch(() => undefined);
    return outcome;
  }

  private async execute(job: SchemaJob, timeoutMs: number): Promise<Outcome> {
    const worker = await this.started();
    return new Promise<Outcome>((resolve) => {
      const finish = (outcome: Outcome) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onFailure);
        worker.off('exit', onFailure);
        if (!outcome.ok) {
          this.log.warn(
            { op: job.op, reason: outcome.reason },
            'json schema job refused: over its budget',
          );
          void this.discard();
        }
        resolve(outcome);
      };
      const onMessage = (message: WorkerMessage) => {
        if (message.type === 'result')
          finish({ ok: true, problems: message.problems });
      };
      const onFailure = () => finish({ ok: false, reason: 'crashed' });
      const timer = setTimeout(
        () => finish({ ok: false, reason: 'timeout' }),
        timeoutMs,
      );
      worker.on('message', onMessage);
      worker.once('error', onFailure);
      worker.once('exit', onFailure);
      worker.postMessage(job);
    });
  }

  private started(): Promise<Worker> {
    if (!this.worker) {
      const starting = startWorker();
      // A worker that failed to start is not kept: the next job tries again.
      starting.catch(() => {
        if (this.worker === starting) this.worker = undefined;
      });
      this.worker = starting;
    }
    return this.worker;
  }

  private async discard(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await (await worker.catch(() => undefined))?.terminate();
  }
}

/** The compiled worker in production; from the TypeScript sources (tests, ts-node) through ts-node. */
function startWorker(): Promise<Worker> {
  const extension = extname(__filename);
  const worker = new Worker(join(__dirname, `json-schema.worker${extension}`), {
    resourceLimits: WORKER_LIMITS,
    execArgv:
      extension === '.ts'
        ? ['--require', 'ts-node/register/transpile-only']
        : [],
  });
  worker.unref();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the JSON Schema worker did not start')),
      STARTUP_TIMEOUT_MS,
    );
    worker.once('message', (message: WorkerMessage) => {
      clearTimeout(timer);
      if (message.type === 'ready') resolve(worker);
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
