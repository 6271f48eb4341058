import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registerProcessMetrics } from './process-metrics';
import {
  ADMISSION_REASONS,
  ADMISSION_REFUSAL_LABELS,
  AdmissionGauges,
  AdmissionRefusalLabel,
  FinishedRun,
  FirstTokenMark,
  Metrics,
  PoolUsage,
  ProviderFailureLabel,
  RUN_OUTCOME_LABELS,
  RunOutcomeLabel,
  runOutcomeLabel,
  TokenDirection,
  WebhookOutcome,
} from './metrics';

/** Request durations: from a few ms (cached GETs) to minutes (a long streamed answer). */
const HTTP_BUCKETS_SECONDS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];
const FIRST_TOKEN_BUCKETS_SECONDS = [
  0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60,
];

type HttpSeries = Histogram.Internal<'method' | 'route' | 'status'>;
type FirstTokenSeries = Histogram.Internal<'provider' | 'model'>;

/** The series of one catalog model, made once at its first run. */
interface ModelSeries {
  runs: Record<RunOutcomeLabel, Counter.Internal>;
  tokens: Record<TokenDirection, Counter.Internal>;
}

/**
 * Metrics on a prom-client registry of their own (not the global one: every app instance, the tests' too,
 * has its own). The hot path finds its series in maps keyed by label values (made once per combination),
 * so a request costs a few map lookups and one observation, and nothing is done per token.
 */
export class PrometheusMetrics extends Metrics {
  readonly enabled = true;
  readonly registry = new Registry();

  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** route → method → status → series. */
  private readonly httpSeries = new Map<
    string,
    Map<string, Map<number, HttpSeries>>
  >();
  private readonly runs: Counter<'model' | 'outcome'>;
  private readonly tokenCounter: Counter<'direction' | 'model'>;
  private readonly modelSeries = new Map<string, ModelSeries>();
  private readonly firstToken: Histogram<'provider' | 'model'>;
  /** provider → model → series. */
  private readonly firstTokenSeries = new Map<
    string,
    Map<string, FirstTokenSeries>
  >();
  private readonly providerFailures: Counter<'endpoint' | 'model' | 'reason'>;
  private readonly providerRetries: Counter<'endpoint' | 'model'>;
  private readonly providerFallbacks: Counter<'from_model' | 'to_model'>;
  private readonly keyCooldowns: Counter<'endpoint'>;
  private readonly quotaRefusals: Counter<'plan'>;
  private readonly webhookEvents: Counter<'provider' | 'outcome'>;
  private readonly rateLimitRefusals: Counter<'rule'>;
  private readonly admissionRefusals: Counter<'reason'>;
  private liveStreams: () => number = () => 0;
  private pool: (() => PoolUsage) | undefined;
  private admission: (() => AdmissionGauges) | undefined;

  constructor() {
    super();
    const registers = [this.registry];
    registerProcessMetrics(this.registry);
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP responses by method, route template and status: time from the request to the end of the response (a streamed answer counts until its end).',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS_SECONDS,
      registers,
    });
    const read = (source: () => number) =>
      function (this: Gauge) {
        this.set(source());
      };
    new Gauge({
      name: 'chat_live_streams',
      help: 'Chat and Skill runs generating on this instance now.',
      registers,
      collect: read(() => this.liveStreams()),
    });
    this.runs = new Counter({
      name: 'chat_runs_total',
      help: 'Runs (chat and Skill) ended, by catalog model and outcome: completed, stopped, or the failure code.',
      labelNames: ['model', 'outcome'],
      registers,
    });
    this.tokenCounter = new Counter({
      name: 'chat_tokens_total',
      help: 'Tokens billed, by direction (input, output) and catalog model.',
      labelNames: ['direction', 'model'],
      registers,
    });
    this.firstToken = new Histogram({
      name: 'chat_provider_time_to_first_token_seconds',
      help: 'Time from the provider call to its first token, by provider and catalog model.',
      labelNames: ['provider', 'model'],
      buckets: FIRST_TOKEN_BUCKETS_SECONDS,
      registers,
    });
    this.providerFailures = new Counter({
      name: 'chat_provider_errors_total',
      help: 'Provider calls failed before their first token, by endpoint, catalog model and reason (http_429, http_auth, http_4xx, http_5xx, connection, timeout, stream, no_key, unavailable, refused).',
      labelNames: ['endpoint', 'model', 'reason'],
      registers,
    });
    this.providerRetries = new Counter({
      name: 'chat_provider_retries_total',
      help: 'Provider calls made again (same model) after a failure before the first token, by endpoint and catalog model.',
      labelNames: ['endpoint', 'model'],
      registers,
    });
    this.providerFallbacks = new Counter({
      name: 'chat_provider_fallbacks_total',
      help: 'Runs that went on to a fallback model, by the model that failed and the one tried next.',
      labelNames: ['from_model', 'to_model'],
      registers,
    });
    this.keyCooldowns = new Counter({
      name: 'chat_provider_key_cooldowns_total',
      help: 'Keys rested after a 429 or a refusal of the key, by endpoint.',
      labelNames: ['endpoint'],
      registers,
    });
    this.quotaRefusals = new Counter({
      name: 'chat_quota_refusals_total',
      help: "Runs refused because the account's daily credits were used up, by plan.",
      labelNames: ['plan'],
      registers,
    });
    this.webhookEvents = new Counter({
      name: 'billing_webhook_events_total',
      help: 'Payment webhook deliveries by provider and outcome: applied, duplicate, invalid (refused), failed (answered 503, delivered again).',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    this.rateLimitRefusals = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused (429) by a rate-limit rule, by rule.',
      labelNames: ['rule'],
      registers,
    });
    const pool = (pick: (usage: PoolUsage) => number) =>
      read(() => (this.pool ? pick(this.pool()) : 0));
    new Gauge({
      name: 'db_pool_connections_in_use',
      help: 'Database pool connections running a query or transaction.',
      registers,
      collect: pool((usage) => usage.total - usage.idle),
    });
    new Gauge({
      name: 'db_pool_connections_idle',
      help: 'Database pool connections open and idle.',
      registers,
      collect: pool((usage) => usage.idle),
    });
    new Gauge({
      name: 'db_pool_waiting_queries',
      help: 'Queries waiting for a database pool connection.',
      registers,
      collect: pool((usage) => usage.waiting),
    });
    new Gauge({
      name: 'db_pool_connections_max',
      help: 'Connections the database pool may open (DATABASE_POOL_SIZE).',
      registers,
      collect: pool((usage) => usage.max),
    });
    this.admissionRefusals = new Counter({
      name: 'chat_admission_refusals_total',
      help: 'New runs refused for load (503 overloaded), by reason: event_loop, memory, database, start_backlog, streams_ceiling, starting_ceiling (refused on arrival), start_timeout (claim not written in time).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ADMISSION_REFUSAL_LABELS)
      this.admissionRefusals.inc({ reason }, 0);
    this.registerAdmissionGauges(registers);
  }

  /** Admission's state and signals (docs/adr/0065), read at scrape time. */
  private registerAdmissionGauges(registers: Registry[]): void {
    const current = () => this.admission?.();
    const admission = (pick: (gauges: AdmissionGauges) => number) =>
      function (this: Gauge) {
        const gauges = current();
        if (gauges) this.set(pick(gauges));
      };
    new Gauge({
      name: 'chat_admission_admitting',
      help: 'Whether this instance admits new runs now (1) or refuses them for load (0).',
      registers,
      collect: admission((gauges) => (gauges.refusing ? 0 : 1)),
    });
    new Gauge({
      name: 'chat_admission_refusing',
      help: 'Why this instance refuses new runs now: 1 for the reason in force, 0 for the others.',
      labelNames: ['reason'],
      registers,
      collect: function (this: Gauge<'reason'>) {
        const gauges = current();
        if (!gauges) return;
        for (const reason of ADMISSION_REASONS)
          this.set({ reason }, gauges.refusing === reason ? 1 : 0);
      },
    });
    new Gauge({
      name: 'chat_admission_open_streams',
      help: 'Chat and Skill responses open on this instance (starting or streaming).',
      registers,
      collect: admission((gauges) => gauges.openStreams),
    });
    new Gauge({
      name: 'chat_admission_starting_runs',
      help: 'Runs admitted whose first byte is not known yet (body, session, checks, claim, first token).',
      registers,
      collect: admission((gauges) => gauges.startingRuns),
    });
    new Gauge({
      name: 'chat_admission_starting_limit',
      help: 'Runs that may be starting at once: the best measured start rate times CHAT_START_TIMEOUT_MS.',
      registers,
      collect: admission((gauges) => gauges.startingLimit),
    });
    new Gauge({
      name: 'chat_admission_event_loop_delay_seconds',
      help: "The event loop's current stall, or its worst delay of the last second if larger, as admission judges it.",
      registers,
      collect: admission((gauges) => gauges.eventLoopDelayMs / 1000),
    });
    new Gauge({
      name: 'chat_admission_event_loop_utilization',
      help: 'The share of the last half second the event loop was busy (0..1), as admission judges it.',
      registers,
      collect: admission((gauges) => gauges.eventLoopUtilization),
    });
    new Gauge({
      name: 'chat_admission_memory_ratio',
      help: 'Resident memory over the memory limit, or V8 heap used over its limit if larger, as admission judges it.',
      registers,
      collect: admission((gauges) => gauges.memoryRatio),
    });
    new Gauge({
      name: 'chat_admission_database_wait_seconds',
      help: 'How long the oldest claim or query still waiting for the database has waited, as admission judges it.',
      registers,
      collect: admission((gauges) => gauges.databaseWaitMs / 1000),
    });
  }

  httpResponse(
    method: string,
    route: string,
    status: number,
    elapsedMs: number,
  ): void {
    this.httpSeriesOf(route, method, status).observe(elapsedMs / 1000);
  }

  runFinished(model: string, run: FinishedRun): void {
    const series = this.seriesOfModel(model);
    series.runs[runOutcomeLabel(run)].inc();
    if (!run.usage) return;
    if (run.usage.inputTokens > 0)
      series.tokens.input.inc(run.usage.inputTokens);
    if (run.usage.outputTokens > 0)
      series.tokens.output.inc(run.usage.outputTokens);
  }

  tokens(direction: TokenDirection, model: string, count: number): void {
    if (count > 0) this.seriesOfModel(model).tokens[direction].inc(count);
  }

  firstTokenTimer(provider: string, model: string): FirstTokenMark {
    const startedAt = performance.now();
    let marked = false;
    return () => {
      if (marked) return;
      marked = true;
      this.firstTokenSeriesOf(provider, model).observe(
        (performance.now() - startedAt) / 1000,
      );
    };
  }

  providerFailure(
    endpoint: string,
    model: string,
    reason: ProviderFailureLabel,
  ): void {
    this.providerFailures.inc({ endpoint, model, reason });
  }

  providerRetry(endpoint: string, model: string): void {
    this.providerRetries.inc({ endpoint, model });
  }

  providerFallback(from: string, to: string): void {
    this.providerFallbacks.inc({ from_model: from, to_model: to });
  }

  keyCooldown(endpoint: string): void {
    this.keyCooldowns.inc({ endpoint });
  }

  quotaRefused(plan: string): void {
    this.quotaRefusals.inc({ plan });
  }

  webhook(provider: string, outcome: WebhookOutcome): void {
    this.webhookEvents.inc({ provider, outcome });
  }

  rateLimited(rule: string): void {
    this.rateLimitRefusals.inc({ rule });
  }

  observeLiveStreams(read: () => number): void {
    this.liveStreams = read;
  }

  observeDatabasePool(read: () => PoolUsage): void {
    this.pool = read;
  }

  admissionRefused(reason: AdmissionRefusalLabel): void {
    this.admissionRefusals.inc({ reason });
  }

  observeAdmission(read: () => AdmissionGauges): void {
    this.admission = read;
  }

  /** The Prometheus text exposition of every metric, and its content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return {
      contentType: this.registry.contentType,
      body: await this.registry.metrics(),
    };
  }

  private httpSeriesOf(
    route: string,
    method: string,
    status: number,
  ): HttpSeries {
    const byMethod = getOrCreate(
      this.httpSeries,
      route,
      () => new Map<string, Map<number, HttpSeries>>(),
    );
    const byStatus = getOrCreate(
      byMethod,
      method,
      () => new Map<number, HttpSeries>(),
    );
    return getOrCreate(byStatus, status, () =>
      this.httpDuration.labels({ method, route, status }),
    );
  }

  private seriesOfModel(model: string): ModelSeries {
    return getOrCreate(this.modelSeries, model, () => ({
      runs: Object.fromEntries(
        RUN_OUTCOME_LABELS.map((outcome) => [
          outcome,
          this.runs.labels({ model, outcome }),
        ]),
      ) as ModelSeries['runs'],
      tokens: {
        input: this.tokenCounter.labels({ direction: 'input', model }),
        output: this.tokenCounter.labels({ direction: 'output', model }),
      },
    }));
  }

  private firstTokenSeriesOf(
    provider: string,
    model: string,
  ): FirstTokenSeries {
    const byModel = getOrCreate(
      this.firstTokenSeries,
      provider,
      () => new Map<string, FirstTokenSeries>(),
    );
    return getOrCreate(byModel, model, () =>
      this.firstToken.labels({ provider, model }),
    );
  }
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}
