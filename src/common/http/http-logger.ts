import { randomUUID } from 'node:crypto';
import { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { context } from '@opentelemetry/api';
import { NextFunction, Request, Response } from 'express';
import { Logger } from '../logging/logger';
import { RequestContext, requestContext } from '../logging/request-context';

/** Told of every finished response (status, milliseconds since the request arrived): the metrics hook. */
export type ResponseObserver = (
  req: Request,
  statusCode: number,
  elapsedMs: number,
) => void;

export const REQUEST_ID_HEADER = 'x-request-id';
const ACCEPTED_INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id: the caller's x-request-id when well formed, else a new UUID. */
    id?: string;
  }
}

/**
 * The first middleware of the app: gives every request an id (the caller's x-request-id when it is
 * well formed), echoes it in the response, writes one access-log line per response (when it finished or
 * its connection closed) and binds the request's context (id, logger) to its async context. Only method,
 * path (never the query string, which can hold OAuth codes), status and time are logged: no headers,
 * cookies or bodies. That line has fixed fields, so it skips the root logger's redaction. `observe` sees the
 * same responses at the same moment (the request metrics), so it costs no listener of its own.
 * docs/adr/0008-logging.md
 */
export function createHttpLogger(root: Logger, observe?: ResponseObserver) {
  const access = root.child({}, { redact: { paths: [], censor: '' } });
  return (req: Request, res: Response, next: NextFunction): void => {
    const requestId = requestIdOf(req);
    req.id = requestId;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const startedAt = performance.now();
    // 'close' comes after 'finish' for every response, or alone when the connection went first.
    const done = () => {
      const statusCode = res.statusCode;
      const elapsedMs = performance.now() - startedAt;
      observe?.(req, statusCode, elapsedMs);
      const line = {
        requestId,
        req: { method: req.method, path: pathOnly(req.originalUrl) },
        res: { statusCode },
        responseTime: Math.round(elapsedMs),
      };
      if (statusCode >= 500) access.error(line, 'request failed');
      else access.info(line, 'request completed');
    };
    // In the request's trace context (tracing on), so the access line carries its trace id; as is otherwise.
    res.once('close', context.bind(context.active(), done));
    requestContext.run(new RequestContext(requestId, root), next);
  };
}

/** The caller's x-request-id when well formed, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && ACCEPTED_INCOMING_ID.test(incoming)
    ? incoming
    : randomUUID();
}

function pathOnly(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}
