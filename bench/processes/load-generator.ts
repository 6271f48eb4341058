/**
 * Load generator, its own process, long-lived and driven by the orchestrator over IPC: it receives a
 * `JobMessage`, runs it with undici (a fresh keep-alive Agent per job, unlimited connections) and sends a
 * `ResultMessage` back. Every chat request is timestamped (sent, headers, first body byte, each token,
 * end) and checked: status 200, every token `w0 ... w<n-1> ` exactly once and in order, a clean end.
 */
import { performance } from 'node:perf_hooks';
import { Agent, Pool, request } from 'undici';
import {
  ChatJobResult,
  ChatTarget,
  isObject,
  JobMessage,
  JobResult,
  LoadJob,
  Outcome,
  RateJobResult,
  ResultMessage,
} from '../support/protocol';
import { checkTokens } from '../support/tokens';

const now = (): number => performance.now();

interface Flight {
  sentAt: number;
  deadline: number;
  controller: AbortController;
  firstByteAt?: number;
  slowCounted: boolean;
  reason?: 'timeout' | 'abandoned';
}

class ChatJob {
  readonly result: ChatJobResult;
  readonly agent: Agent;
  readonly flights = new Set<Flight>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly cpu = process.cpuUsage();
  private readonly started = now();
  /** Open loop: the probe can no longer pass. */
  failed = false;
  private onFailed: (() => void) | undefined;
  /** Told of every request's outcome as it ends (closed loop: what ended inside the window). */
  onOutcome: ((outcome: Outcome) => void) | undefined;

  constructor(
    readonly target: ChatTarget,
    requests: number,
    private readonly maxStartMs = Number.POSITIVE_INFINITY,
    private readonly allowedSlow = Number.POSITIVE_INFINITY,
  ) {
    this.agent = new Agent({
      connections: null,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { timeout: target.deadlineMs },
    });
    this.result = {
      kind: 'chat',
      requests,
      outcomes: {
        ok: 0,
        refusedFast: 0,
        refusedSlow: 0,
        timeout: 0,
        incomplete: 0,
        badTokens: 0,
        httpError: 0,
        networkError: 0,
        abandoned: 0,
      },
      problems: {},
      starts: [],
      headers: [],
      tokenLateness: [],
      refusals: [],
      replayed: 0,
      lostTokens: 0,
      duplicatedTokens: 0,
      outOfOrderTokens: 0,
      slowStarts: 0,
      stoppedEarly: false,
      maxIssueLagMs: 0,
      wallMs: 0,
      generatorCpuMs: 0,
      examples: [],
    };
    this.sweeper = setInterval(() => this.sweep(), 50);
  }

  /** Called once when the job can no longer pass (open loop with stopWhenFailed). */
  whenFailed(callback: () => void): void {
    this.onFailed = callback;
  }

  private sweep(): void {
    const at = now();
    for (const flight of this.flights) {
      if (
        flight.firstByteAt === undefined &&
        !flight.slowCounted &&
        at - flight.sentAt > this.maxStartMs
      )
        this.countSlow(flight);
      if (at > flight.deadline && !flight.reason) {
        flight.reason = 'timeout';
        flight.controller.abort();
      }
    }
  }

  private countSlow(flight: Flight): void {
    flight.slowCounted = true;
    this.result.slowStarts += 1;
    if (this.result.slowStarts > this.allowedSlow) this.fail();
  }

  private fail(): void {
    if (this.failed) return;
    this.failed = true;
    this.onFailed?.();
  }

  /** Aborts everything in flight (counted as abandoned). */
  abandonAll(): void {
    for (const flight of this.flights) {
      if (!flight.reason) {
        flight.reason = 'abandoned';
        flight.controller.abort();
      }
    }
  }

  private record(outcome: Outcome, problem?: string, example?: string): void {
    this.result.outcomes[outcome] += 1;
    this.onOutcome?.(outcome);
    if (outcome !== 'ok' && outcome !== 'abandoned') {
      const key = problem ?? outcome;
      this.result.problems[key] = (this.result.problems[key] ?? 0) + 1;
      if (
        example &&
        this.result.examples.length < 6 &&
        !this.result.examples.some((known) => known.startsWith(key))
      )
        this.result.examples.push(`${key}: ${example}`);
      this.fail();
    }
  }

  /** One chat request; `sentAt` is when it was due (open loop) or issued. */
  async chat(index: number, sentAt: number): Promise<void> {
    const { target } = this;
    const controller = new AbortController();
    const flight: Flight = {
      sentAt,
      deadline: sentAt + target.deadlineMs,
      controller,
      slowCounted: false,
    };
    this.flights.add(flight);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
    };
    if (target.cookies.length > 0)
      headers.cookie = target.cookies[index % target.cookies.length];
    const body = JSON.stringify({
      model: target.model,
      idempotencyKey: `${target.keyPrefix}-${index}`,
      messages: [{ role: 'user', content: `Say something (${index}).` }],
    });
    try {
      const res = await request(`${target.baseUrl}/v1/chat`, {
        method: 'POST',
        dispatcher: this.agent,
        headers,
        body,
        signal: controller.signal,
      });
      const headersAt = now();
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        const endedAt = now();
        const contentType = String(res.headers['content-type'] ?? '');
        const code = problemCode(text);
        if (
          res.statusCode === 503 &&
          res.headers['retry-after'] !== undefined &&
          contentType.includes('application/problem+json')
        ) {
          const elapsed = endedAt - sentAt;
          this.result.refusals.push(elapsed);
          this.record(
            elapsed <= target.fastRefusalMs ? 'refusedFast' : 'refusedSlow',
            `503 ${code}`,
          );
          return;
        }
        this.record(
          'httpError',
          `${res.statusCode} ${code}`,
          text.slice(0, 240),
        );
        return;
      }
      this.result.headers.push(headersAt - sentAt);
      if (res.headers['idempotent-replayed'] === 'true')
        this.result.replayed += 1;
      let text = '';
      let firstAt = 0;
      let completed = 0;
      let lateness = 0;
      for await (const piece of res.body) {
        const at = now();
        if (flight.firstByteAt === undefined) {
          flight.firstByteAt = at;
          firstAt = at;
          this.result.starts.push(at - sentAt);
          if (!flight.slowCounted && at - sentAt > this.maxStartMs)
            this.countSlow(flight);
        }
        const part = (piece as Buffer).toString('utf8');
        text += part;
        // Each token ends with a space: token k is late by its arrival minus (firstAt + k * interval).
        // The earliest token completed by this piece is the latest of them.
        const before = completed;
        for (
          let position = part.indexOf(' ');
          position !== -1;
          position = part.indexOf(' ', position + 1)
        )
          completed += 1;
        if (completed > before)
          lateness = Math.max(
            lateness,
            at - (firstAt + before * target.intervalMs),
          );
      }
      const check = checkTokens(text, target.tokens);
      this.result.lostTokens += check.lost;
      this.result.duplicatedTokens += check.duplicated;
      this.result.outOfOrderTokens += check.outOfOrder;
      if (
        check.lost + check.duplicated + check.outOfOrder + check.garbage >
        0
      ) {
        this.record(
          'badTokens',
          'wrong tokens',
          `lost ${check.lost}, duplicated ${check.duplicated}, out of order ${check.outOfOrder}, other chars ${check.garbage}: ${JSON.stringify(text.slice(0, 80))}`,
        );
        return;
      }
      this.result.tokenLateness.push(lateness);
      this.record('ok');
    } catch (error) {
      if (flight.reason === 'abandoned') this.record('abandoned');
      else if (flight.reason === 'timeout')
        this.record(
          'timeout',
          flight.firstByteAt === undefined
            ? 'timeout before the first byte'
            : 'timeout while streaming',
        );
      else if (flight.firstByteAt !== undefined)
        this.record(
          'incomplete',
          `stream broke off: ${errorCode(error)}`,
          errorMessage(error),
        );
      else this.record('networkError', errorCode(error), errorMessage(error));
    } finally {
      this.flights.delete(flight);
    }
  }

  async finish(): Promise<ChatJobResult> {
    clearInterval(this.sweeper);
    await this.agent.destroy().catch(() => undefined);
    const used = process.cpuUsage(this.cpu);
    this.result.wallMs = now() - this.started;
    this.result.generatorCpuMs = (used.user + used.system) / 1000;
    return this.result;
  }
}

function problemCode(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed) && typeof parsed.code === 'string') return parsed.code;
  } catch {
    // not JSON
  }
  return text.length === 0 ? '(empty body)' : '(not problem+json)';
}

function errorCode(error: unknown): string {
  if (isObject(error) && typeof error.code === 'string') return error.code;
  if (error instanceof Error) return error.name;
  return 'error';
}

function errorMessage(error: unknown): string {
  return error instanceof Error
    ? error.message.slice(0, 200)
    : String(error).slice(0, 200);
}

async function sequential(
  target: ChatTarget,
  requests: number,
  sameRequest: boolean,
): Promise<ChatJobResult> {
  const job = new ChatJob(target, requests);
  for (let index = 0; index < requests; index++)
    await job.chat(sameRequest ? 0 : index, now());
  return job.finish();
}

async function burst(
  target: ChatTarget,
  requests: number,
): Promise<ChatJobResult> {
  const job = new ChatJob(target, requests);
  const all: Promise<void>[] = [];
  for (let index = 0; index < requests; index++)
    all.push(job.chat(index, now()));
  await Promise.all(all);
  return job.finish();
}

/** Starts request i at t0 + i / rate whatever happened to the earlier ones (open loop). */
async function openLoop(
  job: Extract<LoadJob, { kind: 'openLoop' }>,
): Promise<ChatJobResult> {
  const planned = Math.max(1, Math.round((job.rate * job.durationMs) / 1000));
  // p99 (nearest rank) of the starts stays within maxStartMs while at most this many are slower.
  const allowedSlow = planned - Math.ceil(0.99 * planned);
  const chat = new ChatJob(
    job.target,
    planned,
    job.maxStartMs,
    job.stopWhenFailed ? allowedSlow : Number.POSITIVE_INFINITY,
  );
  const gap = 1000 / job.rate;
  const t0 = now();
  const all: Promise<void>[] = [];
  let next = 0;
  let stopped = false;
  await new Promise<void>((issuedAll) => {
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      timer = undefined;
      const at = now();
      while (!stopped && next < planned && t0 + next * gap <= at) {
        const due = t0 + next * gap;
        chat.result.maxIssueLagMs = Math.max(
          chat.result.maxIssueLagMs,
          at - due,
        );
        all.push(chat.chat(next, due));
        next += 1;
      }
      if (stopped || next >= planned) {
        issuedAll();
        return;
      }
      timer = setTimeout(pump, Math.max(0, t0 + next * gap - now()));
    };
    if (job.stopWhenFailed) {
      chat.whenFailed(() => {
        stopped = true;
        chat.result.stoppedEarly = true;
        chat.abandonAll();
        if (timer) {
          clearTimeout(timer);
          pump();
        }
      });
    }
    pump();
  });
  await Promise.all(all);
  // Requests never issued because the probe stopped early.
  chat.result.outcomes.abandoned += planned - next;
  return chat.finish();
}

/**
 * `connections` clients back to back on the target (and as many on `alongside`, over the same window);
 * counts the complete 200s that end inside [warm-up end, + duration).
 */
async function closedLoop(
  job: Extract<LoadJob, { kind: 'closedLoop' }>,
): Promise<ChatJobResult> {
  const from = now() + job.warmupMs;
  const to = from + job.durationMs;
  const run = async (target: ChatTarget): Promise<ChatJobResult> => {
    const chat = new ChatJob(target, 0);
    let windowOk = 0;
    chat.onOutcome = (outcome) => {
      const at = now();
      if (outcome === 'ok' && at >= from && at < to) windowOk += 1;
    };
    let next = 0;
    const client = async () => {
      while (now() < to) {
        const index = next++;
        await chat.chat(index, now());
      }
    };
    await Promise.all(Array.from({ length: job.connections }, client));
    chat.result.requests = next;
    chat.result.windowOk = windowOk;
    return chat.finish();
  };
  const [result, alongside] = await Promise.all([
    run(job.target),
    job.alongside ? run(job.alongside) : undefined,
  ]);
  return alongside ? { ...result, alongside } : result;
}

async function requestRate(
  job: Extract<LoadJob, { kind: 'requestRate' }>,
): Promise<RateJobResult> {
  const cpu = process.cpuUsage();
  const pool = new Pool(job.baseUrl, {
    connections: job.connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
  });
  const from = now() + job.warmupMs;
  const to = from + job.durationMs;
  // Whatever is still unanswered 5 s after the window is aborted: a stuck target must not stall the job.
  const abort = new AbortController();
  const abortTimer = setTimeout(() => abort.abort(), to - now() + 5_000);
  const result: RateJobResult = {
    kind: 'rate',
    perSecond: 0,
    ok: 0,
    completed: 0,
    late: 0,
    wrong: 0,
    errors: {},
    latencies: [],
    generatorCpuMs: 0,
  };
  let sequence = 0;
  const worker = async () => {
    while (now() < to) {
      const cookie =
        job.cookies.length > 0
          ? job.cookies[sequence++ % job.cookies.length]
          : undefined;
      const startedAt = now();
      let outcome: string;
      try {
        const res = await pool.request({
          path: job.path,
          method: 'GET',
          headers: cookie ? { cookie } : {},
          signal: abort.signal,
        });
        const bytes = (await res.body.arrayBuffer()).byteLength;
        outcome =
          res.statusCode !== 200
            ? `status ${res.statusCode}`
            : bytes === job.expectedBytes
              ? 'ok'
              : 'wrong';
      } catch (error) {
        outcome = errorCode(error);
      }
      const endedAt = now();
      result.completed += 1;
      // Requests in flight when the window closes end just after it: only those much later are worth telling.
      if (endedAt >= to + 1_000) result.late += 1;
      if (endedAt < from || endedAt >= to) continue;
      if (outcome === 'ok') {
        result.ok += 1;
        result.latencies.push(endedAt - startedAt);
      } else if (outcome === 'wrong') result.wrong += 1;
      else result.errors[outcome] = (result.errors[outcome] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: job.connections }, worker));
  clearTimeout(abortTimer);
  await pool.destroy().catch(() => undefined);
  const used = process.cpuUsage(cpu);
  result.perSecond = result.ok / (job.durationMs / 1000);
  result.generatorCpuMs = (used.user + used.system) / 1000;
  return result;
}

function run(job: LoadJob): Promise<JobResult> {
  switch (job.kind) {
    case 'sequential':
      return sequential(job.target, job.requests, job.sameRequest === true);
    case 'burst':
      return burst(job.target, job.requests);
    case 'openLoop':
      return openLoop(job);
    case 'closedLoop':
      return closedLoop(job);
    case 'requestRate':
      return requestRate(job);
  }
}

function isJobMessage(message: unknown): message is JobMessage {
  return (
    isObject(message) &&
    message.type === 'job' &&
    typeof message.id === 'number' &&
    isObject(message.job)
  );
}

process.on('message', (message: unknown) => {
  if (!isJobMessage(message)) return;
  const reply = (answer: ResultMessage) => process.send?.(answer);
  run(message.job).then(
    (result) => reply({ type: 'result', id: message.id, result }),
    (error: unknown) =>
      reply({
        type: 'result',
        id: message.id,
        error:
          error instanceof Error
            ? (error.stack ?? error.message)
            : String(error),
      }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready', ports: {} });
