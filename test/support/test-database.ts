import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { resolve } from 'node:path';
import { applyMigrations } from '../../src/infra/prisma/migrator';

export const MIGRATIONS_DIR = resolve(__dirname, '..', '..', 'prisma', 'migrations');

/** The server the suite runs on, as set by global-setup (a maintenance database URL on it). */
export function testServerUrl(): string {
  const url = process.env.TEST_DATABASE_SERVER_URL;
  if (!url) throw new Error('TEST_DATABASE_SERVER_URL is not set: run the tests through jest (global-setup)');
  return url;
}

export function databaseUrlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates an empty, uniquely named database on the server; `drop` removes it (closing its connections). */
export async function createDatabase(serverUrl: string, prefix = 'chat_test'): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await runOnServer(serverUrl, `CREATE DATABASE "${name}"`);
  return {
    name,
    url: databaseUrlFor(serverUrl, name),
    drop: () => runOnServer(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/** A fresh database with every migration applied, for tests that must not share state (e.g. catalog sync). */
export async function createMigratedDatabase(prefix = 'chat_scratch'): Promise<{ url: string; drop: () => Promise<void> }> {
  const database = await createDatabase(testServerUrl(), prefix);
  await applyMigrations({ databaseUrl: database.url, migrationsDir: MIGRATIONS_DIR });
  return database;
}

async function runOnServer(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
