/**
 * The scenarios, each run against the bare relay and the service in every round (bench/run.ts interleaves
 * them). A scenario turns one load-generator job (or, for b, a search of several) plus /proc readings of the
 * target process into named numbers; bench/targets.ts says which of them must meet what.
 */
import { performance } from 'node:perf_hooks';
import {
  BackendCpu,
  cpuMs,
  isAlive,
  listenOverflows,
  machineCpuMs,
  RssSampler,
} from './support/proc';
import { ChatJobResult, ChatTarget, RateJobResult } from './support/protocol';
import { LoadGeneratorClient } from './support/loadgen-client';
import { BenchModel, SHORT_MODEL, STREAM_MODEL } from './support/environment';
import { Settings } from './settings';
import { fmt, max, percentile } from './support/stats';

export type TargetName = 'bare' | 'service';

/** One side of the comparison, as the scenarios see it. */
export interface Target {
  name: TargetName;
  /** The process whose CPU and RSS are read. */
  pid: number;
  /** Base URL of `POST /v1/chat`. */
  chatUrl: string;
  /** Base URL of `GET /v1/plans` and `GET /v1/auth/me`. */
  restUrl: string;
  cookies: string[];
  /** Database whose PostgreSQL backends are charged to this target (the service only). */
  database?: string;
  /** The process exists and answers a cheap GET within 5 s (service: /v1/health/live). */
  alive: () => Promise<boolean>;
}

export interface Context {
  settings: Settings;
  /** The mock provider's process: its CPU is watched so it is never silently the bottleneck. */
  mockPid: number;
  /** CPU used so far by the bench's own processes (orchestrator, mock, relay, load generator, service, its PostgreSQL backends), ms. */
  ownCpuMs: () => number;
  cores: number;
  /** Share of all cores (0-1) that processes outside the bench used during each measurement. */
  otherLoad: number[];
  loadgen: LoadGeneratorClient;
  runTag: string;
  /** Waits until nothing is left over from the previous measurement; returns the ms waited. */
  settle: () => Promise<number>;
  /** Waits (at most 5 s) until the mock has no open stream; returns the ms waited. */
  drain: () => Promise<number>;
  /** Bytes of the service's answers the bare Express app mirrors (f). */
  fixtures: { plans: string; me: string };
}

export interface Measurement {
  values: Record<string, number>;
  /** Non-ok outcomes by kind, e.g. `503 service_unavailable`, `timeout before the first byte`. */
  problems: Record<string, number>;
  notes: string[];
  /** Warn-or-worse service log lines during the measurement (filled in by run.ts). */
  logs?: Record<string, number>;
  /** Set when the measurement could not be taken at all. */
  failed?: string;
}

export interface MetricDef {
  key: string;
  label: string;
  unit: string;
  /** false: no service / bare ratio column (counts of probes, yes/no). */
  ratio?: boolean;
}

export interface Scenario {
  id: string;
  title: string;
  /** Exact definition, for bench/RESULTS.md. */
  definition: (settings: Settings) => string;
  metrics: MetricDef[];
  /** The targets it runs against (default both). */
  targets?: TargetName[];
  run: (ctx: Context, target: Target, round: number) => Promise<Measurement>;
}

let jobSequence = 0;

/** How long e waits for the target to answer again after the burst. */
const RECOVERY_LIMIT_MS = 5_000;

function chatTarget(
  ctx: Context,
  target: Target,
  model: BenchModel,
  deadlineMs: number,
  label: string,
): ChatTarget {
  jobSequence += 1;
  return {
    baseUrl: target.chatUrl,
    model: model.id,
    tokens: model.shape.tokens,
    intervalMs: model.shape.intervalMs,
    cookies: target.cookies,
    keyPrefix: `bench-${ctx.runTag}-${label}-${target.name}-${jobSequence}`,
    deadlineMs,
    fastRefusalMs: ctx.settings.overload.fastRefusalMs,
  };
}

function notOk(result: ChatJobResult): number {
  return result.requests - result.outcomes.ok;
}

function generatorNote(
  result: ChatJobResult | RateJobResult,
  wallMs: number,
): string | undefined {
  const share = result.generatorCpuMs / wallMs;
  return share > 0.7
    ? `the load generator itself used ${fmt(share * 100)} % of a core: it may limit this figure`
    : undefined;
}

interface Measured<T> {
  result: T;
  /** Target process CPU, ms. */
  cpu: number;
  /** CPU of the target's PostgreSQL backends, ms (NaN for the bare relay). */
  pgCpu: number;
  wallMs: number;
  /** Machine-wide listen-queue overflows during the work. */
  overflows: number;
  notes: string[];
}

/** CPU of the target (and of its PostgreSQL backends), listen-queue overflows and the mock's load around `work`. */
async function measured<T>(
  ctx: Context,
  target: Target,
  work: () => Promise<T>,
): Promise<Measured<T>> {
  const backends = target.database
    ? new BackendCpu(target.database)
    : undefined;
  const cpu0 = cpuMs(target.pid);
  const mock0 = cpuMs(ctx.mockPid);
  const overflows0 = listenOverflows();
  const machine0 = machineCpuMs();
  const own0 = ctx.ownCpuMs();
  const started = performance.now();
  const result = await work();
  const wallMs = performance.now() - started;
  const cpu = cpuMs(target.pid) - cpu0;
  const pgCpu = backends ? backends.stop() : Number.NaN;
  const overflows = listenOverflows() - overflows0;
  const machine = machineCpuMs();
  const capacity = wallMs * ctx.cores;
  const otherShare =
    (machine.busy - machine0.busy - (ctx.ownCpuMs() - own0)) / capacity;
  const stealShare = (machine.steal - machine0.steal) / capacity;
  if (Number.isFinite(otherShare)) ctx.otherLoad.push(Math.max(0, otherShare));
  const mockShare = (cpuMs(ctx.mockPid) - mock0) / wallMs;
  const notes: string[] = [];
  if (mockShare > 0.5)
    notes.push(`the mock provider used ${fmt(mockShare * 100)} % of a core`);
  if (otherShare > 0.1)
    notes.push(
      `processes outside the bench used ${fmt(otherShare * 100)} % of the ${ctx.cores} cores meanwhile`,
    );
  if (stealShare > 0.05)
    notes.push(
      `the hypervisor stole ${fmt(stealShare * 100)} % of the CPU meanwhile`,
    );
  if (overflows > 0)
    notes.push(
      `${overflows} connections overflowed a listen queue (the kernel dropped their SYN; the client retries after 1 s, 3 s, ...)`,
    );
  return { result, cpu, pgCpu, wallMs, overflows, notes };
}

const sequential: Scenario = {
  id: 'a',
  title: 'Concurrency 1: sequential short answers',
  definition: (s) =>
    `${s.sequential.requests} chat requests of \`${SHORT_MODEL.id}\` (upstream \`bench-3x0\`: 3 tokens, no delay), one at a time on one keep-alive connection. ` +
    'Start = request sent → first body byte (client clock). CPU per request = target process CPU (utime+stime from /proc) over the run / requests; ' +
    'for the service also the CPU of its PostgreSQL backends per request.',
  metrics: [
    { key: 'startP50', label: 'start p50', unit: 'ms' },
    { key: 'startP99', label: 'start p99', unit: 'ms' },
    { key: 'cpuPerRequest', label: 'CPU per request', unit: 'ms' },
    { key: 'pgCpuPerRequest', label: 'PostgreSQL CPU per request', unit: 'ms' },
    { key: 'errors', label: 'requests not a complete 200', unit: '' },
  ],
  async run(ctx, target) {
    const requests = ctx.settings.sequential.requests;
    const { result, cpu, pgCpu, wallMs, notes } = await measured(
      ctx,
      target,
      () =>
        ctx.loadgen.chat(
          {
            kind: 'sequential',
            target: chatTarget(
              ctx,
              target,
              SHORT_MODEL,
              ctx.settings.sequential.deadlineMs,
              'a',
            ),
            requests,
          },
          requests * ctx.settings.sequential.deadlineMs + 30_000,
        ),
    );
    return {
      values: {
        startP50: percentile(result.starts, 50),
        startP99: percentile(result.starts, 99),
        cpuPerRequest: cpu / requests,
        pgCpuPerRequest: pgCpu / requests,
        errors: notOk(result),
      },
      problems: result.problems,
      notes: [
        ...result.examples,
        generatorNote(result, wallMs),
        ...notes,
      ].filter(isString),
    };
  },
};

interface Probe {
  rate: number;
  pass: boolean;
  text: string;
}

/** The highest passing rate found in the previous round, per target: later rounds start there. */
const previousRate = new Map<TargetName, number>();

function roundRate(rate: number): number {
  return rate >= 20 ? Math.round(rate) : Math.round(rate * 10) / 10;
}

const openLoop: Scenario = {
  id: 'b',
  title: 'Sustained stream starts per second (open loop)',
  definition: (s) =>
    `Requests of \`${STREAM_MODEL.id}\` (50 tokens, 10 per second) started on a fixed schedule at R per second for ${s.rate.durationMs / 1000} s whatever happens to earlier ones, then drained. ` +
    `R passes when every stream is a complete 200 with all 50 tokens in order and the start p99 (scheduled send → first body byte) is ≤ ${s.rate.maxStartMs} ms. ` +
    `Search: the first round starts at ${s.rate.start}/s and doubles (or halves) until the answer is bracketed, later rounds start at the previous round's answer (steps ×${s.rate.precision}, growing); ` +
    `then bisection (geometric) until hi/lo ≤ ${s.rate.precision}, at most ${s.rate.maxProbes} probes in the first round and ${s.rate.maxProbesLater} later; floor ${s.rate.floor}/s. ` +
    `The bare relay's ramp goes on until it fails: the only cap is a safety limit of ${s.rate.cap}/s for both targets, meant to be above anything this machine reaches (a note says if a search hits it). A probe stops early (aborting what is in flight) once it can no longer pass. ` +
    'Reported: the highest passing R.',
  metrics: [
    { key: 'maxRate', label: 'highest passing rate', unit: '/s' },
    { key: 'probes', label: 'probes', unit: '', ratio: false },
  ],
  async run(ctx, target) {
    const s = ctx.settings.rate;
    const probes: Probe[] = [];
    const problems: Record<string, number> = {};
    let mockBusy = 0;
    const probe = async (rate: number): Promise<boolean> => {
      await ctx.settle();
      const planned = Math.max(1, Math.round((rate * s.durationMs) / 1000));
      const { result, overflows, notes } = await measured(ctx, target, () =>
        ctx.loadgen.chat(
          {
            kind: 'openLoop',
            target: chatTarget(ctx, target, STREAM_MODEL, s.deadlineMs, 'b'),
            rate,
            durationMs: s.durationMs,
            maxStartMs: s.maxStartMs,
            stopWhenFailed: true,
          },
          s.durationMs + s.deadlineMs + 30_000,
        ),
      );
      if (notes.some((note) => note.startsWith('the mock'))) mockBusy += 1;
      const p99 = percentile(result.starts, 99);
      const pass = result.outcomes.ok === planned && p99 <= s.maxStartMs;
      for (const [problem, count] of Object.entries(result.problems))
        problems[`${rate}/s: ${problem}`] = count;
      const allowedSlow = planned - Math.ceil(0.99 * planned);
      const detail = pass
        ? `p99 ${fmt(p99)} ms`
        : `${result.outcomes.ok}/${planned} ok${result.stoppedEarly ? ' (stopped early)' : ''}, ${result.slowStarts} starts > ${s.maxStartMs} ms (${allowedSlow} allowed), p99 of the starts seen ${fmt(p99)} ms` +
          (Object.keys(result.problems).length > 0
            ? `, ${Object.entries(result.problems)
                .map(([problem, count]) => `${count}× ${problem}`)
                .join(', ')}`
            : '');
      const lag =
        (result.maxIssueLagMs > 50
          ? `, generator lag ${fmt(result.maxIssueLagMs)} ms`
          : '') +
        (overflows > 0 ? `, ${overflows} listen-queue overflows` : '');
      probes.push({
        rate,
        pass,
        text: `${rate}/s ${pass ? 'pass' : 'FAIL'} (${detail}${lag})`,
      });
      return pass;
    };

    const previous = previousRate.get(target.name);
    const maxProbes = previous ? s.maxProbesLater : s.maxProbes;
    let rate = roundRate(
      Math.min(s.cap, Math.max(s.floor, previous ?? s.start)),
    );
    // From the previous round's answer one step of the precision brackets it when nothing moved.
    let factor = previous ? s.precision : 2;
    let lo = 0;
    let hi = Number.POSITIVE_INFINITY;
    for (;;) {
      const pass = await probe(rate);
      if (pass) lo = rate;
      else hi = rate;
      if (
        (pass && rate >= s.cap) ||
        (!pass && rate <= s.floor) ||
        (lo > 0 && hi < Number.POSITIVE_INFINITY) ||
        probes.length >= maxProbes
      )
        break;
      rate = roundRate(
        pass
          ? Math.min(s.cap, rate * factor)
          : Math.max(s.floor, rate / factor),
      );
      factor = Math.min(2, factor * factor);
    }
    while (
      lo > 0 &&
      hi < Number.POSITIVE_INFINITY &&
      hi / lo > s.precision &&
      probes.length < maxProbes
    ) {
      const mid = roundRate(Math.sqrt(lo * hi));
      if (mid <= lo || mid >= hi) break;
      if (await probe(mid)) lo = mid;
      else hi = mid;
    }
    // Let the last probe's tail (streams of aborted requests) finish here, not in the next measurement.
    await ctx.settle();
    if (lo > 0) previousRate.set(target.name, lo);
    const notes = [`probes: ${probes.map((p) => p.text).join('; ')}`];
    if (lo >= s.cap)
      notes.push(
        `reached the cap (${s.cap}/s, a safety limit): the real limit is higher, so the ratio is capped; raise rate.cap in bench/settings.ts`,
      );
    if (lo === 0)
      notes.push(
        probes.some((p) => p.rate <= s.floor)
          ? `even the floor (${s.floor}/s) failed`
          : `no probe passed within ${maxProbes} probes`,
      );
    else if (hi / lo > s.precision && lo < s.cap)
      notes.push(
        `stopped at ${maxProbes} probes with the answer between ${lo}/s and ${hi === Number.POSITIVE_INFINITY ? '?' : `${hi}/s`}`,
      );
    if (mockBusy > 0)
      notes.push(
        `the mock provider used more than half a core in ${mockBusy} probe(s)`,
      );
    return { values: { maxRate: lo, probes: probes.length }, problems, notes };
  },
};

async function burstRun(
  ctx: Context,
  target: Target,
  label: string,
  streams: number,
  deadlineMs: number,
): Promise<
  Measured<ChatJobResult> & {
    rss: { before: number; peak: number; after: number };
  }
> {
  const sampler = new RssSampler(target.pid, 50);
  // CPU and RSS until the target's upstream streams are over too: work it does after the client gave up counts.
  const run = await measured(ctx, target, async () => {
    const result = await ctx.loadgen.chat(
      {
        kind: 'burst',
        target: chatTarget(ctx, target, STREAM_MODEL, deadlineMs, label),
        requests: streams,
      },
      deadlineMs + 60_000,
    );
    await ctx.drain();
    return result;
  });
  return { ...run, rss: sampler.stop() };
}

function burstValues(
  streams: number,
  run: Awaited<ReturnType<typeof burstRun>>,
): Record<string, number> {
  const { result, cpu, pgCpu, rss } = run;
  return {
    errors: notOk(result),
    lostTokens: result.lostTokens,
    startP50: percentile(result.starts, 50),
    startP99: percentile(result.starts, 99),
    latenessP99: percentile(result.tokenLateness, 99),
    cpuPerStream: cpu / streams,
    pgCpuPerStream: pgCpu / streams,
    rssPerStream: (rss.peak - rss.before) / streams / 1024,
    rssPeak: rss.peak / 1024 / 1024,
    overflows: run.overflows,
  };
}

const burstMetrics: MetricDef[] = [
  { key: 'errors', label: 'streams not a complete 200', unit: '' },
  { key: 'lostTokens', label: 'lost tokens', unit: '' },
  { key: 'startP50', label: 'start p50', unit: 'ms' },
  { key: 'startP99', label: 'start p99', unit: 'ms' },
  { key: 'latenessP99', label: 'token lateness p99', unit: 'ms' },
  { key: 'cpuPerStream', label: 'CPU per stream', unit: 'ms' },
  { key: 'pgCpuPerStream', label: 'PostgreSQL CPU per stream', unit: 'ms' },
  { key: 'rssPerStream', label: 'RSS growth per stream', unit: 'KiB' },
  { key: 'rssPeak', label: 'peak RSS', unit: 'MiB' },
  {
    key: 'overflows',
    label: 'listen-queue overflows (machine-wide)',
    unit: '',
    ratio: false,
  },
];

const burstDefinition = (streams: number, deadlineMs: number) =>
  `${streams} requests of \`${STREAM_MODEL.id}\` (50 tokens, 10 per second) issued at once on fresh keep-alive connections; each must be a complete 200 with all tokens in order ` +
  `(a request unfinished ${deadlineMs / 1000} s after it was sent is aborted and counted as an error). Start = sent → first body byte; token lateness = per stream, the worst arrival of token k ` +
  `against first byte + k × 100 ms. CPU per stream = target CPU from the start until the last answer and the last upstream stream (at most 5 s more) / ${streams}; ` +
  `RSS growth per stream = (peak RSS, sampled every 50 ms, − RSS before) / ${streams}.`;

/** c, d and h: the same burst at three sizes (settings `burstSmall`, `burstLarge`, `burstHuge`). */
function burstScenario(
  id: string,
  title: string,
  size: (settings: Settings) => { streams: number; deadlineMs: number },
): Scenario {
  return {
    id,
    title,
    definition: (s) => burstDefinition(size(s).streams, size(s).deadlineMs),
    metrics: burstMetrics,
    async run(ctx, target) {
      const { streams, deadlineMs } = size(ctx.settings);
      const run = await burstRun(ctx, target, id, streams, deadlineMs);
      return {
        values: burstValues(streams, run),
        problems: run.result.problems,
        notes: [
          ...run.result.examples,
          generatorNote(run.result, run.wallMs),
          ...run.notes,
        ].filter(isString),
      };
    },
  };
}

const burstSmall = burstScenario(
  'c',
  'Simultaneous streams (small burst)',
  (s) => s.burstSmall,
);

const burstLarge = burstScenario(
  'd',
  'Simultaneous streams (large burst)',
  (s) => s.burstLarge,
);

const burstHuge = burstScenario(
  'h',
  'Simultaneous streams (huge burst)',
  (s) => s.burstHuge,
);

const overload: Scenario = {
  id: 'e',
  title: 'Overload: served or refused at once',
  definition: (s) =>
    `${s.overload.streams} requests of \`${STREAM_MODEL.id}\` issued at once. Each must be served (a complete 200 with all tokens) or refused at once: ` +
    `503 application/problem+json with a Retry-After header, answered within ${s.overload.fastRefusalMs} ms of sending (later = a slow refusal). ` +
    `Anything else (other status, 503 without Retry-After or problem+json, reset, broken stream, lost tokens, unfinished after ${s.overload.deadlineMs / 1000} s) is an other error. ` +
    'Alive = the process still exists afterwards (no crash); then the time until it answers a cheap GET within 5 s (service: GET /v1/health/live, bare: GET /v1/plans of its Express app; ' +
    `n/a = not within ${RECOVERY_LIMIT_MS / 1000} s). The bare relay has no admission control: how many it serves is what the service's served count is set against; its other numbers are for reference.`,
  metrics: [
    { key: 'served', label: 'served', unit: '' },
    { key: 'refusedFast', label: 'refused fast', unit: '' },
    { key: 'refusedSlow', label: 'refused slow', unit: '' },
    { key: 'otherErrors', label: 'other errors', unit: '' },
    { key: 'maxRefusalMs', label: 'max time to a refusal', unit: 'ms' },
    { key: 'startP99', label: 'start p99 of served', unit: 'ms' },
    { key: 'rssPerStream', label: 'RSS growth per request', unit: 'KiB' },
    { key: 'rssPeak', label: 'peak RSS', unit: 'MiB' },
    {
      key: 'overflows',
      label: 'listen-queue overflows (machine-wide)',
      unit: '',
      ratio: false,
    },
    {
      key: 'alive',
      label: 'alive afterwards (1 = yes)',
      unit: '',
      ratio: false,
    },
    { key: 'recoveryMs', label: 'answers a cheap GET again after', unit: 'ms' },
  ],
  async run(ctx, target) {
    const { streams, deadlineMs } = ctx.settings.overload;
    const run = await burstRun(ctx, target, 'e', streams, deadlineMs);
    const { result } = run;
    const refused = result.outcomes.refusedFast + result.outcomes.refusedSlow;
    // Alive = the process did not crash; recovery = how long until it answers a cheap GET again.
    const alive = isAlive(target.pid) ? 1 : 0;
    const recoveryStarted = performance.now();
    let recoveryMs = Number.NaN;
    while (
      alive === 1 &&
      performance.now() - recoveryStarted < RECOVERY_LIMIT_MS
    ) {
      if (await target.alive()) {
        recoveryMs = performance.now() - recoveryStarted;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return {
      values: {
        served: result.outcomes.ok,
        refusedFast: result.outcomes.refusedFast,
        refusedSlow: result.outcomes.refusedSlow,
        otherErrors: result.requests - result.outcomes.ok - refused,
        maxRefusalMs: refused > 0 ? max(result.refusals) : Number.NaN,
        startP99: percentile(result.starts, 99),
        rssPerStream: (run.rss.peak - run.rss.before) / streams / 1024,
        rssPeak: run.rss.peak / 1024 / 1024,
        overflows: run.overflows,
        alive,
        recoveryMs,
      },
      problems: result.problems,
      notes: [
        ...result.examples,
        generatorNote(result, run.wallMs),
        ...run.notes,
      ].filter(isString),
    };
  },
};

const requestRate: Scenario = {
  id: 'f',
  title: 'Request rate of cheap routes',
  definition: (s) =>
    `GET /v1/plans (no auth) and GET /v1/auth/me (a session cookie, users round-robin) from ${s.requestRate.connections} keep-alive connections, each sending its next request when the previous answer is read; ` +
    `${s.requestRate.warmupMs / 1000} s warm-up, then answers completed in the next ${s.requestRate.durationMs / 1000} s are counted (200 with the expected body length). ` +
    'The bare reference is an Express 5 app answering the same bytes with res.json().',
  metrics: [
    { key: 'plansPerSecond', label: 'GET /v1/plans', unit: 'req/s' },
    { key: 'plansP99', label: 'GET /v1/plans latency p99', unit: 'ms' },
    { key: 'mePerSecond', label: 'GET /v1/auth/me', unit: 'req/s' },
    { key: 'meP99', label: 'GET /v1/auth/me latency p99', unit: 'ms' },
    {
      key: 'cpuPerThousand',
      label: 'CPU per 1000 answers (both routes, warm-up included)',
      unit: 'ms',
    },
  ],
  async run(ctx, target) {
    const s = ctx.settings.requestRate;
    const job = (path: string, cookies: string[], body: string) =>
      ctx.loadgen.rate(
        {
          kind: 'requestRate',
          baseUrl: target.restUrl,
          path,
          cookies,
          connections: s.connections,
          warmupMs: s.warmupMs,
          durationMs: s.durationMs,
          expectedBytes: Buffer.byteLength(body),
        },
        s.warmupMs + s.durationMs + 30_000,
      );
    const plans = await measured(ctx, target, () =>
      job('/v1/plans', [], ctx.fixtures.plans),
    );
    await ctx.settle();
    const me = await measured(ctx, target, () =>
      job('/v1/auth/me', target.cookies, ctx.fixtures.me),
    );
    const problems: Record<string, number> = {};
    for (const [name, result] of [
      ['plans', plans.result],
      ['me', me.result],
    ] as const) {
      if (result.wrong > 0)
        problems[`${name}: wrong body length`] = result.wrong;
      if (result.late > 0)
        problems[
          `${name}: answered over 1 s after the measured window (not counted)`
        ] = result.late;
      for (const [error, count] of Object.entries(result.errors))
        problems[`${name}: ${error}`] = count;
    }
    return {
      values: {
        plansPerSecond: plans.result.perSecond,
        plansP99: percentile(plans.result.latencies, 99),
        mePerSecond: me.result.perSecond,
        meP99: percentile(me.result.latencies, 99),
        cpuPerThousand:
          ((plans.cpu + me.cpu) /
            Math.max(1, plans.result.completed + me.result.completed)) *
          1000,
      },
      problems,
      notes: [
        generatorNote(plans.result, plans.wallMs),
        generatorNote(me.result, me.wallMs),
        ...plans.notes,
        ...me.notes,
      ].filter(isString),
    };
  },
};

const replay: Scenario = {
  id: 'g',
  title: 'Idempotent replay (service only)',
  definition: (s) =>
    `One request of \`${SHORT_MODEL.id}\`, then ${s.replay.requests - 1} retries of it one at a time (same user, idempotencyKey and body): each must be a 200 with ` +
    '`Idempotent-Replayed: true` and the same 3 tokens. Replays per second, start (sent → first byte) p50/p99 of the retries and CPU per request. ' +
    'The bare relay has no stored answers to replay, so this runs against the service only and has no target: it is here to see the replay path move.',
  metrics: [
    { key: 'replaysPerSecond', label: 'replays per second', unit: '/s' },
    { key: 'startP50', label: 'start p50', unit: 'ms' },
    { key: 'startP99', label: 'start p99', unit: 'ms' },
    { key: 'cpuPerRequest', label: 'CPU per request', unit: 'ms' },
    {
      key: 'notReplayed',
      label: 'retries not a replayed complete 200',
      unit: '',
    },
  ],
  targets: ['service'],
  async run(ctx, target) {
    const requests = ctx.settings.replay.requests;
    const { result, cpu, wallMs, notes } = await measured(ctx, target, () =>
      ctx.loadgen.chat(
        {
          kind: 'sequential',
          sameRequest: true,
          target: chatTarget(ctx, target, SHORT_MODEL, 10_000, 'g'),
          requests,
        },
        requests * 10_000 + 30_000,
      ),
    );
    const retries = result.starts.slice(1);
    return {
      values: {
        replaysPerSecond: result.replayed / (wallMs / 1000),
        startP50: percentile(retries, 50),
        startP99: percentile(retries, 99),
        cpuPerRequest: cpu / requests,
        notReplayed:
          requests - 1 - Math.min(result.replayed, result.outcomes.ok),
      },
      problems: result.problems,
      notes: [
        ...result.examples,
        generatorNote(result, wallMs),
        ...notes,
      ].filter(isString),
    };
  },
};

/**
 * In the order they run in a round (a, b, c, d, h, f, g, e): e last, because a target it overloads can take a
 * while to recover and that must not leak into f or g (the next round waits longer for a quiet machine first).
 */
export const SCENARIOS: readonly Scenario[] = [
  sequential,
  openLoop,
  burstSmall,
  burstLarge,
  burstHuge,
  requestRate,
  replay,
  overload,
];

function isString(value: string | undefined): value is string {
  return typeof value === 'string';
}
