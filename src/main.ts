import { resolve } from 'node:path';
import { createApp } from './app.factory';
import { CatalogError } from './catalog/catalog-file';
import { createRootLogger, Logger } from './common/logging/logger';
import { AppConfig } from './config/app-config';
import { ConfigError, loadConfig } from './config/load-config';
import { EmbeddedDatabase, startEmbeddedPostgres } from './infra/database/embedded-postgres';
import { applyMigrations } from './infra/prisma/migrator';

const MIGRATIONS_DIR = resolve(__dirname, '..', 'prisma', 'migrations');

async function bootstrap(): Promise<void> {
  const config = readConfigOrExit();
  const log = createRootLogger(config.log.level);
  let embedded: EmbeddedDatabase | undefined;
  try {
    if (!config.database.url) {
      log.warn({ dataDir: config.database.embeddedDir }, 'DATABASE_URL is not set: starting the embedded PostgreSQL (development only)');
      embedded = await startEmbeddedPostgres({ dataDir: config.database.embeddedDir, port: config.database.embeddedPort, log: (m) => log.debug(m) });
    }
    const runtime: AppConfig = { ...config, database: { ...config.database, url: embedded?.url ?? config.database.url } };
    const { applied } = await applyMigrations({ databaseUrl: runtime.database.url!, migrationsDir: MIGRATIONS_DIR, log: (m) => log.info(m) });
    log.info({ applied: applied.length }, 'database migrations up to date');

    const app = await createApp(runtime, log);
    await app.listen(config.http.port, config.http.host);
    log.info({ url: `http://localhost:${config.http.port}`, docs: `http://localhost:${config.http.port}/docs` }, 'chat api listening');
    onShutdownSignal(log, config.http.shutdownTimeoutMs, async () => {
      await app.close();
      await embedded?.stop();
    });
  } catch (error) {
    log.fatal({ err: error }, startupFailureMessage(error));
    await embedded?.stop().catch(() => undefined);
    process.exit(1);
  }
}

function readConfigOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

function startupFailureMessage(error: unknown): string {
  if (error instanceof CatalogError) return error.message;
  return `startup failed: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * SIGTERM/SIGINT: stop accepting connections, let in-flight requests finish, close pools, then exit.
 * If draining takes longer than SHUTDOWN_TIMEOUT_MS the remaining connections are cut and we exit 1.
 */
function onShutdownSignal(log: Logger, timeoutMs: number, close: () => Promise<void>): void {
  let closing = false;
  const handler = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: draining in-flight requests');
    const timer = setTimeout(() => {
      log.error({ timeoutMs }, 'shutdown timed out: closing remaining connections');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    close()
      .then(() => {
        log.info({}, 'shutdown complete');
        process.exit(0);
      })
      .catch((error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

void bootstrap();
