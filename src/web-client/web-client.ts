import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import express, { NextFunction, Request, Response } from 'express';
import { Logger } from '../common/logging/logger';

/** Paths the API owns: never answered with the client's page. */
const API_PATHS = /^\/(v1|docs)(\/|$|-json)/;

/**
 * Serves the reference web client from the API's origin, so its session cookie and CSRF rules work as in
 * production: the built files (hashed assets cached for a year, index.html never), and index.html for any
 * other GET that asks for a page (client-side routes such as /chat or /reset-password). API paths, and
 * requests that prefer JSON (or take anything), go on to the API (a problem+json 404 for an unknown one).
 * docs/adr/0058-web-client.md
 */
export function serveWebClient(
  app: NestExpressApplication,
  log: Logger,
  dir: string,
): void {
  const index = join(dir, 'index.html');
  if (!existsSync(index)) {
    log.warn(
      { dir },
      'WEB_CLIENT is on but the client is not built: run `npm run build:web` (or `npm run build`)',
    );
    return;
  }
  const files = express.static(dir, {
    index: false,
    fallthrough: true,
    setHeaders: (res, path) =>
      res.setHeader(
        'Cache-Control',
        path.includes(`${join(dir, 'assets')}`)
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
      ),
  });
  const page = (req: Request, res: Response, next: NextFunction) => {
    // A browser asks for text/html; an API client (*/*, JSON) gets the API's own 404 instead.
    if (
      (req.method !== 'GET' && req.method !== 'HEAD') ||
      req.accepts(['json', 'html']) !== 'html'
    )
      return next();
    res.setHeader('Cache-Control', 'no-cache');
    // A shared conversation's page is kept out of search engines, as its API answer is.
    if (req.path.startsWith('/shared/'))
      res.setHeader('X-Robots-Tag', 'noindex');
    res.sendFile(index);
  };
  // One layer, and API requests leave it after one test (every API request passes here).
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (API_PATHS.test(req.path)) return next();
    files(req, res, (error?: unknown) =>
      error ? next(error) : page(req, res, next),
    );
  });
}
