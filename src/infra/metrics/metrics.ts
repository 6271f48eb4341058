/**
 * What the service counts for Prometheus, as intention-revealing calls: features say what happened
 * (`runFinished`, `quotaRefused`, ...) and never touch prom-client. Every label value a caller passes comes
 * from a bounded set (a catalog model id, a provider, a plan code, a rule name, a route template): never a
 * user id, an email, a conversation id or an idempotency key.
 *
 * Without METRICS_PORT the service gets `NO_METRICS`, whose methods do nothing, so the hooks cost next to
 * nothing where metrics are off.
 * docs/adr/0054-metrics.md
 */

/** How a run ended, as a label: its status, or for a failure the failure's code. */
export type RunOutcomeLabel =
  | 'completed'
  | 'stopped'
  | 'provider_error'
  | 'provider_timeout'
  | 'generation_interrupted'
  | 'failed';

export const RUN_OUTCOME_LABELS: readonly RunOutcomeLabel[] = [
  'completed',
  'stopped',
  'provider_error',
  'provider_timeout',
  'generation_interrupted',
  'failed',
];

/**
 * A finished run as the chat reports it (its RunOutcome fits this shape): the status, the failure code
 * and the usage of a settled run.
 */
export interface FinishedRun {
  status: 'completed' | 'stopped' | 'failed';
  errorCode?: string;
  usage?: { inputTokens: number; outputTokens: number };
}

export type TokenDirection = 'input' | 'output';

/**
 * applied: changed state; duplicate: seen before; invalid: refused (signature, payload, not configured);
 * failed: could not be applied now (503, delivered again).
 */
export type WebhookOutcome = 'applied' | 'duplicate' | 'invalid' | 'failed';

/** The database pool as pg reports it. */
export interface PoolUsage {
  /** Connections open (in use + idle). */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  max: number;
}

/** Why a new run is refused on arrival (docs/adr/0065): a measured shortage, or an operator's ceiling reached. */
export const ADMISSION_REASONS = [
  'event_loop',
  'memory',
  'database',
  'start_backlog',
  'streams_ceiling',
  'starting_ceiling',
] as const;

export type AdmissionReason = (typeof ADMISSION_REASONS)[number];

/** A refusal's reason as counted: one on arrival, or a claim not written within CHAT_START_TIMEOUT_MS. */
export type AdmissionRefusalLabel = AdmissionReason | 'start_timeout';

export const ADMISSION_REFUSAL_LABELS: readonly AdmissionRefusalLabel[] = [
  ...ADMISSION_REASONS,
  'start_timeout',
];

/** Admission now, as the metrics read it at scrape time. */
export interface AdmissionGauges {
  /** Why new runs are refused now; null while they are admitted. */
  refusing: AdmissionReason | null;
  openStreams: number;
  startingRuns: number;
  /** Runs that may be starting at once now (measured start rate × start deadline, or the ceiling). */
  startingLimit: number;
  eventLoopDelayMs: number;
  /** The share of the last half second the event loop was busy (0..1). */
  eventLoopUtilization: number;
  memoryRatio: number;
  databaseWaitMs: number;
}

/** Called once, at the first token of a generation. */
export type FirstTokenMark = () => void;

/**
 * Why a provider call failed before its first token, as a label: the HTTP status class (429 and the key
 * refusals apart), no connection, the first-token timeout, a broken stream, or the router found no key.
 */
export type ProviderFailureLabel =
  | 'http_429'
  | 'http_auth'
  | 'http_4xx'
  | 'http_5xx'
  | 'connection'
  | 'timeout'
  | 'stream'
  | 'no_key'
  | 'unavailable'
  | 'refused';

export abstract class Metrics {
  /** True when a registry collects (METRICS_PORT set). */
  abstract readonly enabled: boolean;

  /** One finished HTTP response; `route` is the route template (`/v1/conversations/:id`) or `unmatched`. */
  abstract httpResponse(
    method: string,
    route: string,
    status: number,
    elapsedMs: number,
  ): void;

  /** A run ended: counted by model and outcome, and its settled usage added to the token counters. */
  abstract runFinished(model: string, run: FinishedRun): void;

  /** Tokens billed for `model`, by direction. */
  abstract tokens(
    direction: TokenDirection,
    model: string,
    count: number,
  ): void;

  /** Starts timing a provider call; the mark it answers records the time to the first token (once). */
  abstract firstTokenTimer(provider: string, model: string): FirstTokenMark;

  /** A provider call failed before its first token (docs/adr/0063): by endpoint, catalog model and why. */
  abstract providerFailure(
    endpoint: string,
    model: string,
    reason: ProviderFailureLabel,
  ): void;

  /** The router called the same model again after a failure before its first token. */
  abstract providerRetry(endpoint: string, model: string): void;

  /** The router went on to a fallback model (`from` failed before its first token). */
  abstract providerFallback(from: string, to: string): void;

  /** A key of the endpoint was rested after a 429 or a refusal of the key. */
  abstract keyCooldown(endpoint: string): void;

  /** A run refused because the account's daily credits were used up; `plan` is the plan code. */
  abstract quotaRefused(plan: string): void;

  abstract webhook(provider: string, outcome: WebhookOutcome): void;

  /** A request refused by the named rate-limit rule (`login-ip`, `two-factor-user`, ...). */
  abstract rateLimited(rule: string): void;

  /** Runs generating on this instance, read at scrape time. */
  abstract observeLiveStreams(read: () => number): void;

  /** The database pool, read at scrape time. */
  abstract observeDatabasePool(read: () => PoolUsage): void;

  /** A new run refused for load, by reason. */
  abstract admissionRefused(reason: AdmissionRefusalLabel): void;

  /** Admission's state and signals, read at scrape time. */
  abstract observeAdmission(read: () => AdmissionGauges): void;
}

const ignore = (): void => undefined;

/** Metrics off: every call returns at once. */
class NoMetrics extends Metrics {
  readonly enabled = false;
  httpResponse(): void {}
  runFinished(): void {}
  tokens(): void {}
  firstTokenTimer(): FirstTokenMark {
    return ignore;
  }
  providerFailure(): void {}
  providerRetry(): void {}
  providerFallback(): void {}
  keyCooldown(): void {}
  quotaRefused(): void {}
  webhook(): void {}
  rateLimited(): void {}
  observeLiveStreams(): void {}
  observeDatabasePool(): void {}
  admissionRefused(): void {}
  observeAdmission(): void {}
}

export const NO_METRICS: Metrics = new NoMetrics();

/** The outcome label of a finished run: a failure by its code when it is a known one. */
export function runOutcomeLabel(
  run: Pick<FinishedRun, 'status' | 'errorCode'>,
): RunOutcomeLabel {
  if (run.status !== 'failed') return run.status;
  const code = run.errorCode as RunOutcomeLabel | undefined;
  return code !== undefined &&
    code !== 'completed' &&
    code !== 'stopped' &&
    RUN_OUTCOME_LABELS.includes(code)
    ? code
    : 'failed';
}
