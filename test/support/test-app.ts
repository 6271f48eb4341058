import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Type } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createApp } from '../../src/app.factory';
import { createRootLogger } from '../../src/common/logging/logger';
import { loadConfig } from '../../src/config/load-config';
import { AppConfig } from '../../src/config/app-config';
import { buildOpenApiDocument } from '../../src/common/openapi/setup-openapi';
import {
  checkResponsesOf,
  OpenApiDocument,
  OpenApiResponseChecker,
} from './openapi-responses';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  http: ReturnType<typeof request>;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  rawLogs: () => string;
  close: () => Promise<void>;
}

/** The environment every test app starts from; tests override single variables. */
/** What a suite that needs text extraction boots with: extraction on, over the storage those suites share. */
export function extractionEnv(): Record<string, string> {
  const dir = process.env.TEST_SHARED_STORAGE_DIR;
  if (!dir)
    throw new Error(
      'TEST_SHARED_STORAGE_DIR is not set: run the tests through jest (global-setup)',
    );
  return { FILE_EXTRACTION_ENABLED: 'true', STORAGE_DIR: dir };
}

export function testEnv(
  overrides: Record<string, string | undefined> = {},
): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'debug',
    DATABASE_URL: process.env.TEST_DATABASE_URL,
    REDIS_URL: process.env.TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}:`,
    // Suites register and sign in many accounts from one address; rate-limit tests set their own limits.
    RATE_LIMIT_LOGIN_IP: '10000/60',
    RATE_LIMIT_LOGIN_EMAIL: '10000/60',
    RATE_LIMIT_REGISTER_IP: '10000/60',
    RATE_LIMIT_FORGOT_IP: '10000/60',
    RATE_LIMIT_FORGOT_EMAIL: '10000/60',
    RATE_LIMIT_RESET_IP: '10000/60',
    RATE_LIMIT_VERIFY_EMAIL_IP: '10000/60',
    RATE_LIMIT_TWO_FACTOR_IP: '10000/60',
    // Suites share one database but not one storage directory: an instance extracting another suite's
    // files would find no object. Suites that need extraction turn it on over TEST_SHARED_STORAGE_DIR.
    FILE_EXTRACTION_ENABLED: 'false',
    // Retries before a first token wait a few milliseconds, not seconds (the backoff has unit tests).
    PROVIDER_RETRY_BASE_MS: '5',
    PROVIDER_RETRY_MAX_MS: '50',
    // The app shares this process's event loop with Jest (module loading, other suites' work on a shared
    // CPU): its stalls are not the app's load. Admission tests set their own limit.
    CHAT_ADMISSION_MAX_EVENT_LOOP_DELAY_MS: '60000',
    CHAT_ADMISSION_MAX_EVENT_LOOP_UTILIZATION_PERCENT: '100',
    // Whether web/dist exists depends on what ran before: suites that test the client turn it on.
    WEB_CLIENT: 'off',
    // Built once per run by global-setup, outside web/dist (several runs may build at once).
    WEB_CLIENT_DIR: process.env.TEST_WEB_CLIENT_DIR,
    ...overrides,
  };
}

/** One checker per set of extra modules: the document is the same for every app built from them. */
const checkers = new Map<string, OpenApiResponseChecker>();

function checkerFor(
  app: NestExpressApplication,
  config: AppConfig,
  extraModules: Type[],
): OpenApiResponseChecker {
  const key = extraModules.map((module) => module.name).join(',');
  let checker = checkers.get(key);
  if (!checker) {
    const document = buildOpenApiDocument(app, {
      cookieName: config.session.cookieName,
    });
    // As /docs-json serves it: plain JSON.
    checker = new OpenApiResponseChecker(
      JSON.parse(JSON.stringify(document)) as OpenApiDocument,
    );
    checkers.set(key, checker);
  }
  return checker;
}

/** Boots the real application (createApp, as server.ts does) on the suite's database, with captured logs. */
export async function bootTestApp(
  overrides: Record<string, string | undefined> = {},
  extraModules: Type[] = [],
): Promise<TestApp> {
  const config = loadConfig(testEnv(overrides));
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (process.env.TEST_LOGS === '1') process.stderr.write(chunk);
      done();
    },
  });
  const app = await createApp(
    config,
    createRootLogger(config.log.level, sink),
    extraModules,
  );
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  checkResponsesOf(app.getHttpServer(), checkerFor(app, config, extraModules));
  return {
    app,
    config,
    http: request(app.getHttpServer()),
    get logs() {
      return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    rawLogs: () => lines.join('\n'),
    close: () => app.close(),
  };
}
