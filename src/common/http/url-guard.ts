import { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors/app-error';

/**
 * A NUL character (%00) in the path or query can reach a route parameter and then the database, which
 * cannot store it: refused here once for every route, like NUL in JSON bodies.
 */
export function refuseNulInUrl(
  req: Request,
  _res: Response,
  next: NextFunction,
): void {
  next(
    /%00/i.test(req.originalUrl)
      ? new AppError('bad_request', 'The URL contains a NUL (%00) character.')
      : undefined,
  );
}
