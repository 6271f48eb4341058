import { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Several middlewares as one: each runs when the one before calls `next()`, an error goes straight to
 * Express' `next(error)`, and a handler that answers without calling `next` ends the chain, exactly as
 * separate `app.use` calls would. Every request goes through the app-wide middlewares, and each Express
 * layer costs a trip through the router (path matching, parameters, prefix trimming): one layer instead
 * of five is measurably cheaper on a cheap route (bench f).
 */
export function composeMiddleware(
  ...handlers: RequestHandler[]
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      const handler = handlers[index];
      index += 1;
      if (!handler) return next();
      void handler(req, res, step);
    };
    step();
  };
}
