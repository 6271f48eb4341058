import { resolve } from 'node:path';
import { DestinationStream } from 'pino';
import { createRootLogger, logDestination } from './common/logging/logger';
import { environmentWithDotEnv } from './config/dotenv';
import { ConfigError, loadConfig } from './config/load-config';
import { applyMigrations } from './infra/prisma/migrator';

/**
 * `node dist/migrate.js`: applies pending migrations to DATABASE_URL and exits (0 when the database is up
 * to date). The step a deployment runs before starting instances with MIGRATE_AT_START=false, e.g. the
 * Kubernetes migration Job. Concurrent runs are safe: the migrator serialises them with an advisory lock.
 */
async function migrate(): Promise<number> {
  let databaseUrl: string | undefined;
  let level: string;
  let destination: DestinationStream | undefined;
  try {
    const config = loadConfig(environmentWithDotEnv());
    databaseUrl = config.database.url;
    level = config.log.level;
    destination = logDestination(config.log.format, config.env);
  } catch (error) {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : String(error)}\n`,
    );
    return 1;
  }
  const log = createRootLogger(level, destination);
  if (!databaseUrl) {
    log.fatal('DATABASE_URL is not set: there is no database to migrate');
    return 1;
  }
  try {
    const { applied } = await applyMigrations({
      databaseUrl,
      migrationsDir: resolve(__dirname, '..', 'prisma', 'migrations'),
      log: (message) => log.info(message),
    });
    log.info({ applied: applied.length }, 'database migrations up to date');
    return 0;
  } catch (error) {
    log.fatal({ err: error }, 'migrations failed');
    return 1;
  } finally {
    log.flush();
  }
}

void migrate().then((code) => {
  process.exitCode = code;
});
