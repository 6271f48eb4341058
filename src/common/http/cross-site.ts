import { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors/app-error';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF defence beside SameSite=Lax: an unsafe request that a browser marks as coming from another site
 * (an Origin outside the allowed origins, or Sec-Fetch-Site: cross-site) is refused before it changes
 * anything; one the browser marks same-origin is the service's own web client and passes. Requests
 * without those headers (curl, server-to-server) are not browsers acting for a user.
 * `exemptPrefixes`: routes called by other servers with their own authentication (payment webhooks).
 * docs/adr/0019-csrf-defence.md
 */
export function refuseCrossSiteWrites(
  allowedOrigins: string[],
  exemptPrefixes: string[] = [],
) {
  const allowed = new Set(allowedOrigins);
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (
      SAFE_METHODS.has(req.method) ||
      exemptPrefixes.some((prefix) => req.path.startsWith(prefix))
    )
      return next();
    const origin = req.headers.origin;
    const fetchSite = req.headers['sec-fetch-site'];
    // A page of this very origin (the web client served at /, whatever host name reached it): browsers set
    // Sec-Fetch-Site themselves and no script can change it.
    if (fetchSite === 'same-origin') return next();
    const crossSite =
      origin !== undefined ? !allowed.has(origin) : fetchSite === 'cross-site';
    next(
      crossSite
        ? new AppError(
            'cross_site_request',
            'This request comes from a site that may not call the API.',
          )
        : undefined,
    );
  };
}
