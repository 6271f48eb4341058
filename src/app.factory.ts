import { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Request, RequestHandler, Response } from 'express';
import cors, { CorsOptionsDelegate } from 'cors';
import helmet from 'helmet';
import { AppModule } from './app.module';
import { serveWebClient } from './web-client/web-client';
import { ChatAdmission, RefusalHeaders } from './chat/admission/chat-admission';
import { NestPinoLogger } from './common/logging/app-logger';
import { Logger } from './common/logging/logger';
import { bodyParsers } from './common/http/body-parsers';
import { composeMiddleware } from './common/http/compose';
import { answerClientErrorsWithProblems } from './common/http/client-error';
import { refuseCrossSiteWrites } from './common/http/cross-site';
import { refuseNulInUrl } from './common/http/url-guard';
import { DrainState } from './common/lifecycle/drain-state';
import { createHttpLogger } from './common/http/http-logger';
import {
  buildOpenApiDocument,
  setupOpenApi,
} from './common/openapi/setup-openapi';
import { Metrics } from './infra/metrics/metrics';
import { observeHttpResponses } from './infra/metrics/http-route';
import { AppConfig } from './config/app-config';

export const API_PREFIX = 'v1';

/**
 * Helmet's defaults for pages (the web client, Swagger UI at /docs), except that a deployment served over
 * plain http (local, LAN) does not ask browsers to upgrade subresources to https: that would leave Swagger
 * UI blank.
 */
function pageHelmetOptions(config: AppConfig): Parameters<typeof helmet>[0] {
  const https = config.appUrl.startsWith('https:');
  return {
    contentSecurityPolicy: {
      directives: { upgradeInsecureRequests: https ? [] : null },
    },
  };
}

/**
 * What a JSON API answer needs (OWASP REST Security Cheat Sheet): no sniffing, no framing, a policy that
 * lets the body load nothing, HSTS, no referrer, same-origin resource policy. Helmet's other headers
 * (COOP, Origin-Agent-Cluster, X-DNS-Prefetch-Control, X-Download-Options, X-Permitted-Cross-Domain-Policies,
 * X-XSS-Protection) act on documents only; every header costs every answer (docs/adr/0067-request-overhead.md).
 */
const API_HELMET_OPTIONS: Parameters<typeof helmet>[0] = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  xFrameOptions: { action: 'deny' },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

/**
 * Helmet's headers for these options, computed once by running helmet against a recording response: they
 * do not depend on the request, so every response gets them with a few setHeader calls instead of helmet's
 * chain of middlewares.
 */
function securityHeaders(
  options: Parameters<typeof helmet>[0],
): [string, string][] {
  const headers = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: unknown) =>
      headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
    getHeader: (name: string) => headers.get(name),
  };
  let computed = false;
  helmet(options)(
    { headers: {} } as Request,
    recorder as unknown as Response,
    () => (computed = true),
  );
  if (!computed)
    throw new Error(
      'helmet did not answer synchronously: its headers depend on the request and cannot be precomputed',
    );
  return [...headers];
}

/** An API path as Express routes it (case-insensitively): /v1, /v1/..., /v1?... */
const API_PATH = new RegExp(`^/${API_PREFIX}(?:[/?]|$)`, 'i');

/** The API's security headers on its answers, the pages' on everything else. */
function setSecurityHeaders(
  api: [string, string][],
  pages: [string, string][],
): RequestHandler {
  return (req, res, next) => {
    for (const [name, value] of API_PATH.test(req.url) ? api : pages)
      res.setHeader(name, value);
    next();
  };
}

const EXPOSED_HEADERS = [
  'x-request-id',
  'x-conversation-id',
  'Idempotent-Replayed',
  'Retry-After',
];

/** CORS headers (credentials included) only for the allowed origins; other origins get none at all. */
function corsForAllowedOriginsOnly(
  origins: string[],
): CorsOptionsDelegate<Request> {
  const allowed = new Set(origins);
  const exposedHeaders = EXPOSED_HEADERS;
  return (req, callback) => {
    const origin = req.headers.origin;
    callback(
      null,
      origin !== undefined && allowed.has(origin)
        ? { origin, credentials: true, exposedHeaders }
        : { origin: false },
    );
  };
}

/**
 * The headers the app's middleware would give a refusal that admission control writes before it (the
 * security headers; CORS, as corsForAllowedOriginsOnly answers, for an allowed origin), so a browser on
 * an allowed origin can read the 503 and its Retry-After.
 */
function refusalHeaders(
  security: [string, string][],
  origins: string[],
): RefusalHeaders {
  const base = Object.fromEntries(security);
  const allowed = new Set(origins);
  const exposed = EXPOSED_HEADERS.join(',');
  return (req) => {
    const origin = req.headers.origin;
    if (origin === undefined || !allowed.has(origin)) return base;
    return {
      ...base,
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Credentials': 'true',
      'Access-Control-Expose-Headers': exposed,
      Vary: 'Origin',
    };
  };
}

/**
 * Builds the configured application exactly as production runs it; server.ts and the e2e tests both use
 * this, so the tests exercise the real middleware, filters and pipes. The caller calls init()/listen().
 */
export async function createApp(
  config: AppConfig,
  logger: Logger,
  extraModules: Type[] = [],
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, logger, extraModules),
    {
      rawBody: true,
      bodyParser: false,
      logger: new NestPinoLogger(logger.child({ component: 'nest' })),
      abortOnError: false,
    },
  );
  answerClientErrorsWithProblems(app.getHttpServer(), logger);
  const security = securityHeaders(API_HELMET_OPTIONS);
  const pageSecurity = securityHeaders(pageHelmetOptions(config));
  // In front of the framework: a run refused for load never enters Express (docs/adr/0065).
  app
    .get(ChatAdmission)
    .guard(app.getHttpServer(), refusalHeaders(security, config.corsOrigins));
  app.set('trust proxy', config.http.trustProxy);
  app.set('x-powered-by', false);
  // Every app-wide middleware as one Express layer (each layer is a router trip per request): the logger
  // first, so even a malformed body is logged and carries a request id; CORS before the CSRF check, so a
  // refused write from an allowed origin is readable; the body parsers last. The web client's layer comes
  // after it: its files and pages are GETs, which none of these change. docs/adr/0067-request-overhead.md
  app.use(
    composeMiddleware(
      createHttpLogger(
        logger,
        observeHttpResponses(
          app.get(Metrics),
          app.getHttpAdapter().getInstance(),
        ),
      ),
      app.get(DrainState).closeConnectionsWhileDraining(),
      setSecurityHeaders(security, pageSecurity),
      cors(corsForAllowedOriginsOnly(config.corsOrigins)),
      refuseNulInUrl,
      refuseCrossSiteWrites(config.corsOrigins, [`/${API_PREFIX}/webhooks/`]),
      ...bodyParsers(config.http.bodyLimitBytes),
    ),
  );
  if (config.http.webClient)
    serveWebClient(app, logger, config.http.webClientDir);
  app.setGlobalPrefix(API_PREFIX);
  if (config.http.apiDocs === 'public')
    setupOpenApi(
      app,
      buildOpenApiDocument(app, { cookieName: config.session.cookieName }),
    );
  return app;
}
