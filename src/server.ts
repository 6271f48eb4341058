import { Server } from 'node:http';
import { resolve } from 'node:path';
import { createApp } from './app.factory';
import { CatalogError } from './catalog/catalog-file';
import { DrainState } from './common/lifecycle/drain-state';
import { GracefulShutdown } from './common/lifecycle/graceful-shutdown';
import { createRootLogger, logDestination } from './common/logging/logger';
import { AppConfig } from './config/app-config';
import { startEmbeddedPostgres } from './infra/database/embedded-postgres';
import { applyMigrations } from './infra/prisma/migrator';
import { Tracing } from './infra/telemetry/tracing';

const MIGRATIONS_DIR = resolve(__dirname, '..', 'prisma', 'migrations');

/** The service: main.ts has read the configuration and started tracing (if configured) before loading this. */
export async function bootstrap(
  config: AppConfig,
  tracing: Tracing | null,
): Promise<void> {
  const log = createRootLogger(
    config.log.level,
    logDestination(config.log.format, config.env),
    { traceIds: tracing !== null },
  );
  const shutdown = new GracefulShutdown(log, config.http.shutdownTimeoutMs);
  // Registered first, so it runs last: the spans of the shutdown itself are exported too.
  if (tracing) shutdown.add('flush traces', () => tracing.shutdown());
  try {
    if (tracing)
      log.info(
        { endpoint: tracing.endpoint },
        'OpenTelemetry tracing on: spans are exported over OTLP',
      );
    let databaseUrl = config.database.url;
    if (!databaseUrl) {
      log.warn(
        { dataDir: config.database.embeddedDir },
        'DATABASE_URL is not set: starting the embedded PostgreSQL (development only)',
      );
      const starting = startEmbeddedPostgres({
        dataDir: config.database.embeddedDir,
        port: config.database.embeddedPort,
        log: (m) => log.debug(m),
      });
      // Registered before the start completes: a signal during startup must not leave PostgreSQL running.
      shutdown.add('stop embedded postgres', async () =>
        (await starting.catch(() => undefined))?.stop(),
      );
      databaseUrl = (await starting).url;
    }
    if (config.database.migrateAtStart) {
      const { applied } = await applyMigrations({
        databaseUrl,
        migrationsDir: MIGRATIONS_DIR,
        log: (m) => log.info(m),
      });
      log.info({ applied: applied.length }, 'database migrations up to date');
    } else {
      log.info(
        'MIGRATE_AT_START=false: migrations are left to a separate step (node dist/migrate.js)',
      );
    }

    const runtime: AppConfig = {
      ...config,
      database: { ...config.database, url: databaseUrl },
    };
    const app = await createApp(runtime, log);
    shutdown.add('close app (database pool, redis)', () => app.close());
    await app.init();
    const server = app.getHttpServer();
    await listen(server, config.http);
    shutdown.add('drain http', () => drainHttp(server, app.get(DrainState)));
    shutdown.whenTimedOut(() => server.closeAllConnections());
    log.info(
      {
        url: `http://localhost:${config.http.port}`,
        docs: `http://localhost:${config.http.port}/docs`,
      },
      'chat api listening',
    );
  } catch (error) {
    log.fatal({ err: error }, startupFailureMessage(error));
    await shutdown.run('startup failed', 1);
  }
}

/**
 * Listens with the configured accept queue: a burst of connections beyond Node's default of 511 would
 * otherwise be dropped by the kernel and retried by clients seconds later.
 */
function listen(server: Server, http: AppConfig['http']): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(
      { port: http.port, host: http.host, backlog: http.backlog },
      () => {
        server.off('error', reject);
        resolve();
      },
    );
  });
}

/** Stop accepting, tell clients to close keep-alive connections, and wait for in-flight requests. */
function drainHttp(server: Server, drain: DrainState): Promise<void> {
  drain.begin();
  return new Promise((done) => {
    server.close(() => done());
    server.closeIdleConnections();
  });
}

function startupFailureMessage(error: unknown): string {
  if (error instanceof CatalogError) return error.message;
  return `startup failed: ${error instanceof Error ? error.message : String(error)}`;
}
