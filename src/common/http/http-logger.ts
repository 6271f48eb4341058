import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { NextFunction, Request, Response } from 'express';
import { pinoHttp } from 'pino-http';
import { Logger, serializeError } from '../logging/logger';
import { requestContext } from '../logging/request-context';

export const REQUEST_ID_HEADER = 'x-request-id';
const ACCEPTED_INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The first middleware of the app: gives every request an id (the caller's x-request-id when it is
 * well formed), echoes it in the response, writes one access-log line per response and binds a child
 * logger carrying the id to the async context of the request. Only method, path (never the query
 * string, which can hold OAuth codes) and status are logged: no headers, cookies or bodies.
 */
export function createHttpLogger(root: Logger) {
  const logHttp = pinoHttp({
    logger: root,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const incoming = req.headers[REQUEST_ID_HEADER];
      const id = typeof incoming === 'string' && ACCEPTED_INCOMING_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader(REQUEST_ID_HEADER, id);
      return id;
    },
    customAttributeKeys: { reqId: 'requestId' },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ method: req.method, path: pathOnly(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: serializeError,
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
    quietReqLogger: true,
    // Our serializers take the raw objects (pino-http would otherwise hand them pre-serialized copies).
    wrapSerializers: false,
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    logHttp(req, res);
    const requestId = String(req.id);
    requestContext.run({ requestId, log: req.log }, next);
  };
}

function pathOnly(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}
