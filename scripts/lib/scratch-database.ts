import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** A throwaway database on an existing PostgreSQL server. */
export interface ScratchDatabase {
  name: string;
  url: string;
  drop: () => Promise<void>;
}

/**
 * Creates an empty database next to the one `serverUrl` points at (same host, port and credentials).
 * The caller must call `drop()`; it also ends sessions still connected to it.
 */
export async function createScratchDatabase(
  serverUrl: string,
  prefix: string,
): Promise<ScratchDatabase> {
  const name =
    `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase();
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new Error(`Invalid scratch database name: ${name}`);
  await runOnServer(serverUrl, `CREATE DATABASE "${name}"`);
  return {
    name,
    url: withDatabase(serverUrl, name),
    drop: () =>
      runOnServer(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/** The same connection URL with another database name. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
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
