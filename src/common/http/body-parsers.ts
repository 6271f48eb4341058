import { IncomingMessage } from 'node:http';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';

/** A request body that could not be read (malformed JSON, over the limit, bad encoding). */
export class BodyReadError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
  ) {
    super(`request body could not be read: ${type}`);
    this.name = 'BodyReadError';
  }
}

/**
 * JSON and urlencoded parsers with a size limit. The raw bytes are kept on `req.rawBody` (webhook
 * signatures are computed over them), and parser failures become BodyReadError so the error filter
 * can tell a malformed body from any other 400.
 */
export function bodyParsers(limitBytes: number): RequestHandler[] {
  const verify = (req: IncomingMessage, _res: unknown, buffer: Buffer) => {
    (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buffer;
  };
  return [
    express.json({ limit: limitBytes, verify }),
    express.urlencoded({ limit: limitBytes, extended: false, verify }),
  ].map(wrapErrors);
}

function wrapErrors(parser: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) =>
    parser(req, res, (error?: unknown) => {
      if (!error) return next();
      const { type, status } = error as { type?: unknown; status?: unknown };
      next(new BodyReadError(typeof type === 'string' ? type : 'unknown', typeof status === 'number' ? status : 400));
    });
}
