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
import { freePort } from './service-process';
import { MIGRATIONS_DIR } from './test-database';

/**
 * Gives the run its own database: on the server of DATABASE_URL when set (CI uses the machine's
 * PostgreSQL), otherwise on an embedded PostgreSQL started in a temporary directory. Workers read
 * TEST_DATABASE_URL / TEST_DATABASE_SERVER_URL / TEST_REDIS_URL; global-teardown removes it all.
 */
export default async function globalSetup(): Promise<void> {
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
  if (process.env.REDIS_URL) process.env.TEST_REDIS_URL = process.env.REDIS_URL;
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
}
