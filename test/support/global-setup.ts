import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/infra/database/embedded-postgres';
import { applyMigrations } from '../../src/infra/prisma/migrator';
import {
  createScratchDatabase,
  withDatabase,
} from '../../scripts/lib/scratch-database';
import {
  provideChromium,
  provideKubectl,
  runIncludes,
  RunSelection,
} from './run-tools';
import { freePort } from './service-process';
import { MIGRATIONS_DIR } from './test-database';
import { provideRedis, provideRedisServer } from './test-redis';

/**
 * Everything the run needs, so that `npm test` works on a fresh machine with nothing set:
 * - a database of its own: on the server of DATABASE_URL when the run is given one (CI passes the
 *   machine's PostgreSQL), otherwise on an embedded PostgreSQL started in a temporary directory;
 * - Redis: REDIS_URL when given, otherwise a redis-server of the run's own;
 * - Chromium, kubectl and redis-server, found or installed, when the run includes the tests that drive them.
 * Those are the only variables of the caller's environment the run reads (with CHROMIUM_PATH); tests read
 * what this sets (TEST_*), and global-teardown removes it all. docs/adr/0002-test-run-environment.md
 */
export default async function globalSetup(
  selection: RunSelection = {},
): Promise<void> {
  if (runIncludes(selection, /^web-.*\.e2e-spec\.ts$/))
    process.env.TEST_CHROMIUM_PATH = provideChromium();
  if (runIncludes(selection, /^kubernetes\.e2e-spec\.ts$/))
    process.env.TEST_KUBECTL_PATH = provideKubectl();
  if (runIncludes(selection, /^redis-outage\.e2e-spec\.ts$/))
    process.env.TEST_REDIS_SERVER_PATH = provideRedisServer();
  const redis = await provideRedis(await freePort());
  globalThis.__TEST_REDIS_STOP__ = redis.stop;
  process.env.TEST_REDIS_URL = redis.url;
  let serverUrl: string;
  if (process.env.DATABASE_URL) {
    serverUrl = withDatabase(process.env.DATABASE_URL, 'postgres');
  } else {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'chat-test-pg-'));
    const embedded = await startEmbeddedPostgres({ dataDir, port });
    serverUrl = withDatabase(embedded.url, 'postgres');
    globalThis.__TEST_EMBEDDED_PG__ = {
      stop: async () => {
        await embedded.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const database = await createScratchDatabase(serverUrl, 'chat_test');
  await applyMigrations({
    databaseUrl: database.url,
    migrationsDir: MIGRATIONS_DIR,
  });
  globalThis.__TEST_DATABASE_DROP__ = database.drop;
  process.env.TEST_DATABASE_SERVER_URL = serverUrl;
  process.env.TEST_DATABASE_URL = database.url;
  buildWebClient();
  const sharedStorage = mkdtempSync(join(tmpdir(), 'chat-test-storage-'));
  process.env.TEST_SHARED_STORAGE_DIR = sharedStorage;
  globalThis.__TEST_SHARED_STORAGE_DIR__ = sharedStorage;
}

/**
 * The web client, built from web/src into a directory of this run (a second or so): the browser and
 * serving tests use it through WEB_CLIENT_DIR, and runs going at once never overwrite each other's build.
 */
function buildWebClient(): void {
  const outDir = mkdtempSync(join(tmpdir(), 'chat-test-web-'));
  execFileSync(
    process.execPath,
    [
      'node_modules/vite/bin/vite.js',
      'build',
      '--config',
      'web/vite.config.mts',
      '--outDir',
      outDir,
      '--emptyOutDir',
      '--logLevel',
      'error',
    ],
    {
      cwd: join(__dirname, '..', '..'),
      stdio: 'inherit',
    },
  );
  process.env.TEST_WEB_CLIENT_DIR = outDir;
  globalThis.__TEST_WEB_CLIENT_DIR__ = outDir;
}

declare global {
  var __TEST_WEB_CLIENT_DIR__: string | undefined;
  var __TEST_EMBEDDED_PG__: { stop: () => Promise<void> } | undefined;
  var __TEST_DATABASE_DROP__: (() => Promise<void>) | undefined;
  var __TEST_SHARED_STORAGE_DIR__: string | undefined;
  var __TEST_REDIS_STOP__: (() => Promise<void>) | undefined;
}
