/** Messages between the orchestrator (bench/run.ts) and its child processes (IPC, `process.send`). */

/** Sent by the mock provider and the bare relay once they listen. */
export interface ReadyMessage {
  type: 'ready';
  ports: Record<string, number>;
}

/** Chat requests (`POST /v1/chat`) whose answer must be the full `w0 ... w<n-1> ` sequence. */
export interface ChatTarget {
  baseUrl: string;
  /** Public model id, e.g. `openai/bench-stream`. */
  model: string;
  /** Tokens the answer must hold and their spacing (from the model's upstream shape). */
  tokens: number;
  intervalMs: number;
  /** Cookie headers (`sid=...`), used round-robin; empty for the bare relay. */
  cookies: string[];
  /** Prefix of every idempotency key of the job (a counter is appended). */
  keyPrefix: string;
  /** A request not finished this long after it was sent is aborted and counted as a timeout. */
  deadlineMs: number;
  /** A 503 answered within this long after sending counts as a fast refusal. */
  fastRefusalMs: number;
}

export type LoadJob =
  /** One request at a time; with `sameRequest` every request repeats request 0 (same key, body and user): retries. */
  | {
      kind: 'sequential';
      target: ChatTarget;
      requests: number;
      sameRequest?: boolean;
    }
  | { kind: 'burst'; target: ChatTarget; requests: number }
  | {
      kind: 'openLoop';
      target: ChatTarget;
      /** Stream starts per second. */
      rate: number;
      durationMs: number;
      /** A start (sent -> first body byte) slower than this is "slow"; the probe fails when the slow ones exceed 1 %. */
      maxStartMs: number;
      /** Stop issuing and abort everything as soon as the probe cannot pass any more. */
      stopWhenFailed: boolean;
    }
  | {
      /**
       * Chat throughput: `connections` clients each send their next request as soon as the last answer is
       * read, for `warmupMs` and then `durationMs`; `windowOk` counts the complete 200s that ended inside
       * the measured window. With `alongside`, as many clients load that second target at the same time
       * (its result is the answer's `alongside`): two targets compared under the very same machine load.
       */
      kind: 'closedLoop';
      target: ChatTarget;
      alongside?: ChatTarget;
      connections: number;
      warmupMs: number;
      durationMs: number;
    }
  | {
      kind: 'requestRate';
      baseUrl: string;
      path: string;
      cookies: string[];
      connections: number;
      warmupMs: number;
      durationMs: number;
      /** Byte length of the expected body; responses of another length count as wrong. */
      expectedBytes: number;
    };

export interface JobMessage {
  type: 'job';
  id: number;
  job: LoadJob;
}

/** Every chat request ends as exactly one of these. */
export type Outcome =
  | 'ok'
  | 'refusedFast'
  | 'refusedSlow'
  | 'timeout'
  | 'incomplete'
  | 'badTokens'
  | 'httpError'
  | 'networkError'
  /** In flight when an open-loop probe had already failed and was stopped. */
  | 'abandoned';

export interface ChatJobResult {
  kind: 'chat';
  requests: number;
  outcomes: Record<Outcome, number>;
  /** `503 problem-code`, `500 internal_error`, `ECONNRESET`, ... with their counts (everything not ok). */
  problems: Record<string, number>;
  /** Request sent -> first body byte, ms, of every 200 that delivered a byte. */
  starts: number[];
  /** Request sent -> response headers, ms, of every 200. */
  headers: number[];
  /** Per served stream: the largest lateness of a token against first-token + i * interval, ms. */
  tokenLateness: number[];
  /** Request sent -> end of a 503 refusal, ms (fast and slow). */
  refusals: number[];
  /** 200s with `Idempotent-Replayed: true`. */
  replayed: number;
  lostTokens: number;
  duplicatedTokens: number;
  outOfOrderTokens: number;
  /** Requests with a start slower than maxStartMs (open loop only), counted while still waiting too. */
  slowStarts: number;
  /** The job stopped early because it could no longer pass (open loop only). */
  stoppedEarly: boolean;
  /** Largest delay between a request's scheduled and actual send (open loop), ms: the generator's own lag. */
  maxIssueLagMs: number;
  wallMs: number;
  /** CPU time of the load generator over the job, ms. */
  generatorCpuMs: number;
  examples: string[];
  /** Closed loop only: complete 200s that ended inside the measured window. */
  windowOk?: number;
  /** Closed loop with `alongside`: that target's result over the same window. */
  alongside?: ChatJobResult;
}

export interface RateJobResult {
  kind: 'rate';
  /** Completed 200s with the expected body length per second of the measured window. */
  perSecond: number;
  ok: number;
  /** Answers of any kind over the whole job, warm-up included. */
  completed: number;
  /** Requests answered (or failed) more than 1 s after the window: not counted. */
  late: number;
  wrong: number;
  errors: Record<string, number>;
  latencies: number[];
  generatorCpuMs: number;
}

export type JobResult = ChatJobResult | RateJobResult;

export interface ResultMessage {
  type: 'result';
  id: number;
  result?: JobResult;
  error?: string;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
