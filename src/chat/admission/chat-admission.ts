import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../common/errors/app-error';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { StartGate, StartRefused } from './start-gate';

/** Connections of the pool kept out of the start gate's reach: settlements and everything else use them. */
const CONNECTIONS_KEPT_FREE = 2;

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
 * - an admitted request gets a slot for its database work (key lookup, history, claim) within
 *   CHAT_START_TIMEOUT_MS of arriving, or is refused then. Both refusals are 503 `overloaded` with
 *   Retry-After: nothing was stored or billed, and the same idempotency key may be sent again.
 */
@Injectable()
export class ChatAdmission {
  private open = 0;
  private readonly gate: StartGate;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.gate = new StartGate(Math.max(1, config.database.poolSize - CONNECTIONS_KEPT_FREE));
  }

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

  /** Runs the start's database work in a slot of the gate; 503 when none frees up before the deadline. */
  async starting<T>(request: RunRequest, work: () => Promise<T>): Promise<T> {
    let release: () => void;
    try {
      release = await this.gate.enter(request.startBy ?? Number.POSITIVE_INFINITY, performance.now(), request.signal);
    } catch (error) {
      if (error instanceof StartRefused) throw overloaded(`${this.gate.queued} chats are waiting to start.`);
      throw error;
    }
    try {
      return await work();
    } finally {
      release();
    }
  }
}

function overloaded(why: string): AppError {
  return new AppError('overloaded', `${why} Nothing was stored or billed: retry in a moment (the same idempotencyKey is fine).`, {
    headers: { 'Retry-After': '1' },
  });
}
