import { wantsEvents } from '../chat-response.writer';
import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../common/errors/app-error';
import { buildProblem, sendProblem } from '../../common/errors/problem-details';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';

/** What admission knows of a request it let in (chat and Skill runs only). */
export interface Admission {
  /** performance.now() when it was let in. */
  at: number;
  /** Its start is over (claimed, replayed or refused): it no longer counts as starting. Idempotent. */
  started: () => void;
}

declare module 'express-serve-static-core' {
  interface Request {
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

/** The routes that start runs: POST /v1/chat, /v1/skills/:id/run, /v1/orgs/:orgId/skills/:id/run, /v1/conversations/:id/regenerate and …/messages/:messageId/edit. */
const RUN_ROUTE =
  /^\/v1\/(chat|(orgs\/[^/]+\/)?skills\/[^/]+\/run|conversations\/[^/]+\/(regenerate|messages\/[^/]+\/edit))\/?(\?|$)/;

/**
 * Admission control for the routes that start runs, so that an instance under more load than it can carry
 * refuses at once instead of degrading for everyone. Checked first thing (before the body is read), a
 * request is refused when this instance already has CHAT_MAX_STREAMS chat responses open or
 * CHAT_MAX_STARTING runs still starting (body, session, checks and claim not done yet); an admitted request
 * whose claim could not be written within CHAT_START_TIMEOUT_MS (the database stalled) is refused then.
 * Every refusal is 503 `overloaded` with Retry-After: nothing was stored or billed, and the same
 * idempotency key may be sent again.
 * docs/adr/0031-admission-control.md
 */
@Injectable()
export class ChatAdmission {
  private open = 0;
  private starting = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** App-level middleware, before the body parsers: other routes pass untouched. */
  middleware(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction): void => {
      if (req.method !== 'POST' || !RUN_ROUTE.test(req.url)) return next();
      const { maxStreams, maxStarting } = this.config.chat;
      if (this.open >= maxStreams)
        return refuse(
          req,
          res,
          `This instance is serving ${this.open} chats, its limit.`,
        );
      if (this.starting >= maxStarting)
        return refuse(
          req,
          res,
          `${this.starting} chats are starting on this instance, its limit.`,
        );
      this.open += 1;
      this.starting += 1;
      let starting = true;
      const started = () => {
        if (!starting) return;
        starting = false;
        this.starting -= 1;
      };
      res.once('close', () => {
        started();
        this.open -= 1;
      });
      req.admission = { at: performance.now(), started };
      next();
    };
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
}

/**
 * The refusal written here and now, as the problem filter would render `overloaded(why)`: under overload
 * thousands of these are sent while the admitted runs start, and the trip through the error handlers
 * (Express, Nest, the filter) would make each one cost several times more.
 */
function refuse(req: Request, res: Response, why: string): void {
  const error = overloaded(why);
  sendProblem(
    res,
    req.method,
    buildProblem({
      code: error.code,
      detail: error.detail,
      requestId: String(req.id ?? 'unknown'),
    }),
    error.options.headers,
  );
}

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
