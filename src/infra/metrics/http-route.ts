import { Application, Request } from 'express';
import { ResponseObserver } from '../../common/http/http-logger';
import { Metrics } from './metrics';

/** The route label of a request no registered route answers (404, 405, or a path that matches none). */
export const UNMATCHED_ROUTE = 'unmatched';

interface RouteLike {
  path?: unknown;
  methods?: Record<string, boolean>;
}

interface RouterLayer {
  route?: RouteLike;
  match(path: string): boolean;
}

/**
 * The observer of HTTP responses for `metrics`, or undefined when metrics are off (nothing to call per
 * request). Labels are the route template, never the raw URL: its ids would make every URL a series.
 */
export function observeHttpResponses(
  metrics: Metrics,
  app: Application,
): ResponseObserver | undefined {
  if (!metrics.enabled) return undefined;
  const templates = new RouteTemplates(
    () =>
      (app as unknown as { router?: { stack: RouterLayer[] } }).router?.stack ??
      [],
  );
  return (req, statusCode, elapsedMs) =>
    metrics.httpResponse(
      req.method,
      templates.of(req, statusCode),
      statusCode,
      elapsedMs,
    );
}

/**
 * The route template of a finished request. A routed request carries its route (`req.route`, set by
 * Express' router). A request answered before routing (admission's 503, a body the parser refused, a
 * cross-site write) is matched against the router's routes; 404 and 405 are `unmatched` without a lookup.
 */
export class RouteTemplates {
  constructor(private readonly stack: () => readonly RouterLayer[]) {}

  of(
    req: Pick<Request, 'method' | 'originalUrl'> & { route?: unknown },
    statusCode: number,
  ): string {
    const routed = templateOf(req.route);
    if (routed !== undefined) return routed;
    if (statusCode === 404 || statusCode === 405) return UNMATCHED_ROUTE;
    return this.lookup(req.method, pathOnly(req.originalUrl));
  }

  private lookup(method: string, path: string): string {
    const wanted = method.toLowerCase();
    for (const layer of this.stack()) {
      const route = layer.route;
      if (
        !route?.methods ||
        !(
          route.methods[wanted] ||
          route.methods._all ||
          (wanted === 'head' && route.methods.get)
        )
      )
        continue;
      const template = templateOf(route);
      if (template !== undefined && layer.match(path)) return template;
    }
    return UNMATCHED_ROUTE;
  }
}

function templateOf(route: unknown): string | undefined {
  const path = (route as RouteLike | undefined)?.path;
  return typeof path === 'string' ? path : undefined;
}

function pathOnly(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}
