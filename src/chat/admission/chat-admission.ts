import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../common/errors/app-error';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';

declare module 'express-serve-static-core' {
  interface Request {
    /** performance.now() when admission let the request in (chat and Skill runs only). */
    admittedAt?: number;
  }
}

/** A run's request as the pipeline sees it: whether its client is still there and when it must have started. */
export interface RunRequest {
  signal?: AbortSignal;
  /** performance.now() time by which the run must have been claimed, or it is refused (503). */
  startBy?: number;
}

/**
 * Admission control for the routes that start runs (POST /v1/chat, POST /v1/skills/:id/run), so that an
 * instance under more load than it can carry refuses at once instead of degrading for everyone:
 * - past CHAT_MAX_STREAMS open chat responses, a new request is refused before anything else is done;
 * - an admitted request whose claim has not been written within CHAT_START_TIMEOUT_MS of arriving (claims
 *   wait for a batch when the database is busy: see RunStore) is refused then. Both refusals are 503
 *   `overloaded` with Retry-After: nothing was stored or billed, and the same idempotency key may be sent again.
 */
@Injectable()
export class ChatAdmission {
  private open = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Chat responses open on this instance (admitted and not yet closed). */
  get openStreams(): number {
    return this.open;
  }

  /** The route middleware: refuses past the open-streams limit, else counts the request until it closes. */
  middleware(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction): void => {
      if (this.open >= this.config.chat.maxStreams) return next(overloaded(`This instance is serving ${this.open} chats, its limit.`));
      this.open += 1;
      res.once('close', () => (this.open -= 1));
      req.admittedAt = performance.now();
      next();
    };
  }

  /** What the pipeline needs of an admitted request: its client's signal and its start deadline. */
  runRequest(req: Request, signal: AbortSignal): RunRequest {
    return { signal, startBy: (req.admittedAt ?? performance.now()) + this.config.chat.startTimeoutMs };
  }
}

/** 503 overloaded: the request was refused before anything was stored or billed. */
export function overloaded(why: string): AppError {
  return new AppError('overloaded', `${why} Nothing was stored or billed: retry in a moment (the same idempotencyKey is fine).`, {
    headers: { 'Retry-After': '1' },
  });
}
