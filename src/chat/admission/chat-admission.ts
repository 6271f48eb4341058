import { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Request } from 'express';
import { AppError } from '../../common/errors/app-error';
import { buildProblem, sendProblem } from '../../common/errors/problem-details';
import { REQUEST_ID_HEADER, requestIdOf } from '../../common/http/http-logger';
import { AppLogger } from '../../common/logging/app-logger';
import { AdmissionConfig, AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { PrismaService } from '../../infra/prisma/prisma.service';
import {
  AdmissionGauges,
  AdmissionRefusalLabel,
  Metrics,
} from '../../infra/metrics/metrics';
import { wantsEvents } from '../chat-response.writer';
import { RunStore } from '../run-store';
import {
  AdmissionReason,
  HeadroomMonitor,
  HeadroomReadings,
  shortage,
  StartRate,
} from './headroom';
import { memoryLimitBytes } from './memory-limit';

/** What admission knows of a request it let in (chat and Skill runs only). */
export interface Admission {
  /** performance.now() when it was let in. */
  at: number;
  /** Its start is over (claimed, replayed or refused): it no longer counts as starting. Idempotent. */
  started: () => void;
}

declare module 'node:http' {
  interface IncomingMessage {
    admission?: Admission;
  }
}

/** A run's request as the pipeline sees it: whether its client is still there and when it must have started. */
export interface RunRequest {
  signal?: AbortSignal;
  /** performance.now() time by which the run must have been claimed, or it is refused (503). */
  startBy?: number;
  /** Called once the start is over, whatever its outcome. */
  started?: () => void;
  /** The client reads server-sent events, so it can approve tool calls (a plain-text one cannot). */
  canApprove?: boolean;
}

/** Headers a refusal carries besides its own (security headers, CORS for an allowed origin). */
export type RefusalHeaders = (req: IncomingMessage) => Record<string, string>;

/** Admission now, for the readiness body and the metrics. */
export interface AdmissionState extends AdmissionGauges {
  memoryLimitBytes: number;
}

/** The routes that start runs: POST /v1/chat, /v1/skills/:id/run, /v1/orgs/:orgId/skills/:id/run, /v1/conversations/:id/regenerate and …/messages/:messageId/edit. */
const RUN_ROUTE =
  /^\/v1\/(chat|(orgs\/[^/]+\/)?skills\/[^/]+\/run|conversations\/[^/]+\/(regenerate|messages\/[^/]+\/edit))\/?(\?|$)/;

/**
 * Runs per second an instance assumes it can start until a burst has shown it more (two cores that also run
 * PostgreSQL started about 450 per second on the bench): with CHAT_START_TIMEOUT_MS of 3 s, an idle
 * instance lets 1,200 runs start at once, the old fixed ceiling, and more once it has measured more.
 */
const PRIOR_STARTS_PER_SECOND = 400;

/** Refusals are summed up in one log line per this period, not one line each (thousands come in a burst). */
const REFUSAL_REPORT_MS = 10_000;

/**
 * Admission control for the routes that start runs, so that an instance under more load than it can carry
 * refuses at once instead of degrading for everyone. It sits in front of the framework (the HTTP server's
 * request listener, before Express and Nest), so a refusal costs a header check and one small write.
 * A new run is admitted while this instance has headroom: no more runs are starting than its measured start
 * rate gets through within CHAT_START_TIMEOUT_MS, its event loop is not stalled (now, or in the last second)
 * beyond CHAT_ADMISSION_MAX_EVENT_LOOP_DELAY_MS nor busier than CHAT_ADMISSION_MAX_EVENT_LOOP_UTILIZATION_PERCENT,
 * its memory is under CHAT_ADMISSION_MAX_MEMORY_PERCENT of its limit, and no claim or query has waited
 * CHAT_ADMISSION_MAX_DB_WAIT_MS for the database; and while the operator's optional ceilings
 * (CHAT_MAX_STREAMS open answers, CHAT_MAX_STARTING runs without a first byte yet)
 * are not reached. An admitted run whose claim could not be written within CHAT_START_TIMEOUT_MS is refused
 * then. Every refusal is 503 `overloaded` with Retry-After: nothing was stored or billed, and the same
 * idempotency key may be sent again.
 * docs/adr/0065-adaptive-admission.md (which replaces the fixed count of 0031)
 */
@Injectable()
export class ChatAdmission implements OnApplicationBootstrap, OnModuleDestroy {
  private open = 0;
  private starting = 0;
  private readonly limits: AdmissionConfig;
  private readonly memoryLimit: number;
  private readonly monitor: HeadroomMonitor;
  private readonly startRate = new StartRate(PRIOR_STARTS_PER_SECOND);
  private refusedSinceReport = new Map<AdmissionRefusalLabel, number>();
  private reportTimer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    prisma: PrismaService,
    store: RunStore,
    private readonly metrics: Metrics,
    private readonly log: AppLogger,
  ) {
    this.limits = config.chat.admission;
    this.memoryLimit = memoryLimitBytes(this.limits.memoryLimitBytes).bytes;
    this.monitor = new HeadroomMonitor(this.memoryLimit, () =>
      Math.max(prisma.oldestConnectionWaitMs(), store.oldestClaimWaitMs()),
    );
  }

  /** After start-up, whose module loading stalls the loop once and says nothing of load. */
  onApplicationBootstrap(): void {
    this.monitor.start();
    this.metrics.observeAdmission(() => this.state());
  }

  onModuleDestroy(): void {
    this.monitor.stop();
    clearTimeout(this.reportTimer);
    this.report();
  }

  /**
   * Puts admission in front of the server's request listeners (the framework's app): a run refused for
   * load never reaches them. `refusalHeaders` adds what the app's middleware would have (CORS, security).
   */
  guard(server: Server, refusalHeaders: RefusalHeaders): void {
    const listeners = server.listeners('request') as ((
      req: IncomingMessage,
      res: ServerResponse,
    ) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.method === 'POST' && RUN_ROUTE.test(req.url ?? '')) {
        const refusal = this.refusalReason();
        if (refusal) return this.refuse(req, res, refusal, refusalHeaders);
        this.admit(req, res);
      }
      for (const listener of listeners) listener.call(server, req, res);
    });
  }

  /** What the pipeline needs of an admitted request: its client's signal, its start deadline, its end of start. */
  runRequest(req: Request, signal: AbortSignal): RunRequest {
    const admission = req.admission;
    return {
      signal,
      startBy:
        (admission?.at ?? performance.now()) + this.config.chat.startTimeoutMs,
      started: admission?.started,
      canApprove: wantsEvents(req),
    };
  }

  /** Admission now: whether it refuses and why, the counts and the measured signals. */
  state(): AdmissionState {
    const readings = this.monitor.readings();
    return {
      refusing: this.refusalReason(readings),
      openStreams: this.open,
      startingRuns: this.starting,
      startingLimit: this.startingLimit(),
      eventLoopDelayMs: readings.eventLoopDelayMs,
      eventLoopUtilization: readings.eventLoopUtilization,
      memoryRatio: readings.memoryRatio,
      databaseWaitMs: readings.databasePoolWaitMs,
      memoryLimitBytes: this.memoryLimit,
    };
  }

  /** A claim not written within CHAT_START_TIMEOUT_MS: counted with the other refusals. */
  refusedAfterAdmission(): void {
    this.count('start_timeout');
  }

  /** The ceilings and the backlog first (counters), then the measured signals. */
  private refusalReason(
    readings: HeadroomReadings = this.monitor.readings(),
  ): AdmissionReason | null {
    return (
      this.ceilingReached() ??
      this.backlogReached() ??
      shortage(readings, this.limits)
    );
  }

  /**
   * Runs that may be starting at once: as many as this instance, at the best rate it has measured, claims
   * within the start deadline. More would wait past it and be refused late (or start and stream late).
   */
  private startingLimit(): number {
    return Math.floor(
      (this.startRate.perSecond() * this.config.chat.startTimeoutMs) / 1000,
    );
  }

  private backlogReached(): AdmissionReason | null {
    return this.starting >= this.startingLimit() ? 'start_backlog' : null;
  }

  private ceilingReached(): AdmissionReason | null {
    const { maxStreams, maxStarting } = this.limits;
    if (maxStreams !== undefined && this.open >= maxStreams)
      return 'streams_ceiling';
    if (maxStarting !== undefined && this.starting >= maxStarting)
      return 'starting_ceiling';
    return null;
  }

  private admit(req: IncomingMessage, res: ServerResponse): void {
    this.open += 1;
    this.starting += 1;
    let starting = true;
    const started = () => {
      if (!starting) return;
      starting = false;
      this.starting -= 1;
      this.startRate.started(this.starting);
    };
    res.once('close', () => {
      started();
      this.open -= 1;
    });
    req.admission = { at: performance.now(), started };
  }

  /**
   * The refusal written here and now, as the problem filter would render `overloaded(why)`: in a burst
   * thousands of these are sent while the admitted runs start, so none goes through the framework, and
   * they are logged as one summary line per period instead of an access line each.
   */
  private refuse(
    req: IncomingMessage,
    res: ServerResponse,
    reason: AdmissionReason,
    refusalHeaders: RefusalHeaders,
  ): void {
    this.count(reason);
    const requestId = requestIdOf(req);
    const error = overloaded(REFUSAL_DETAIL[reason]);
    sendProblem(
      res,
      req.method,
      buildProblem({ code: error.code, detail: error.detail, requestId }),
      {
        ...refusalHeaders(req),
        ...error.options.headers,
        [REQUEST_ID_HEADER]: requestId,
      },
    );
  }

  private count(reason: AdmissionRefusalLabel): void {
    this.metrics.admissionRefused(reason);
    this.refusedSinceReport.set(
      reason,
      (this.refusedSinceReport.get(reason) ?? 0) + 1,
    );
    if (this.reportTimer) return;
    this.reportTimer = setTimeout(() => {
      this.reportTimer = undefined;
      this.report();
    }, REFUSAL_REPORT_MS);
    this.reportTimer.unref();
  }

  private report(): void {
    if (this.refusedSinceReport.size === 0) return;
    const refused = Object.fromEntries(this.refusedSinceReport);
    this.refusedSinceReport = new Map();
    this.log.warn(
      { refused, admission: this.state() },
      'new runs refused for load (503 overloaded)',
    );
  }
}

const REFUSAL_DETAIL: Record<AdmissionReason, string> = {
  event_loop: 'This instance is busy (its event loop is behind).',
  memory: 'This instance is short of memory.',
  database: 'This instance is waiting on its database.',
  start_backlog:
    'This instance has as many chats starting as it can start in time.',
  streams_ceiling: 'This instance serves as many chats as it is set to.',
  starting_ceiling: 'This instance starts as many chats as it is set to.',
};

/** 503 overloaded: the request was refused before anything was stored or billed. */
export function overloaded(why: string): AppError {
  return new AppError(
    'overloaded',
    `${why} Nothing was stored or billed: retry in a moment (the same idempotencyKey is fine).`,
    {
      headers: { 'Retry-After': '1' },
    },
  );
}
