import { resolve } from 'node:path';
import { applyMigrations } from '../../src/infra/prisma/migrator';
import {
  createScratchDatabase,
  ScratchDatabase,
} from '../../scripts/lib/scratch-database';

export const MIGRATIONS_DIR = resolve(
  __dirname,
  '..',
  '..',
  'prisma',
  'migrations',
);

/** The server the suite runs on, as set by global-setup (a maintenance database URL on it). */
export function testServerUrl(): string {
  const url = process.env.TEST_DATABASE_SERVER_URL;
  if (!url)
    throw new Error(
      'TEST_DATABASE_SERVER_URL is not set: run the tests through jest (global-setup)',
    );
  return url;
}

/** A fresh database with every migration applied, for tests that must not share state (e.g. catalog sync). */
export async function createMigratedDatabase(
  prefix = 'chat_scratch',
): Promise<ScratchDatabase> {
  const database = await createScratchDatabase(testServerUrl(), prefix);
  await applyMigrations({
    databaseUrl: database.url,
    migrationsDir: MIGRATIONS_DIR,
  });
  return database;
}
