import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, DatabaseError } from 'pg';
import { doublingDelays, retrying } from '../../common/waiting';
import {
  compareWithFiles,
  DefinitionFile,
  Query,
  readDefinitions,
} from './sql-definitions';

// Applies prisma/migrations with plain `pg`, writing `_prisma_migrations` exactly as Prisma's CLI does,
// so `prisma migrate deploy/status` can take over wherever the native schema engine is available.
// docs/adr/0010-migrations-without-prisma-engine.md

/** Same key as Prisma's native schema engine, so our runner and `prisma migrate` also exclude each other. */
const ADVISORY_LOCK_KEY = '72707369';

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** The checksum of the definition files last applied (one row). */
const CREATE_DEFINITIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_sql_definitions" (
    "id"          INTEGER PRIMARY KEY DEFAULT 1 CHECK ("id" = 1),
    "checksum"    VARCHAR(64) NOT NULL,
    "applied_at"  TIMESTAMPTZ NOT NULL DEFAULT now()
)`;
/** SQLSTATE lock_not_available: a lock_timeout expired. */
const LOCK_NOT_AVAILABLE = '55P03';
const DEFINITIONS_LOCK_TIMEOUT = '5s';
const DEFINITIONS_GIVE_UP_MS = 60_000;

export interface ApplyMigrationsOptions {
  databaseUrl: string;
  migrationsDir: string;
  /**
   * The views' and functions' current definitions (`CREATE OR REPLACE`), applied after the migrations;
   * default: `sql/` beside the migrations directory, when there is one (prisma/sql/README.md); `false`:
   * none (a shadow database that must hold only what the migrations make).
   */
  definitionsDir?: string | false;
  log?: (message: string) => void;
}

export interface LocalMigration {
  name: string;
  sql: string;
  checksum: string;
}

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
}

export class MigrationError extends Error {
  constructor(
    message: string,
    readonly migrationName: string,
  ) {
    super(message);
    this.name = 'MigrationError';
  }
}

export async function applyMigrations(
  options: ApplyMigrationsOptions,
): Promise<{ applied: string[] }> {
  const log = options.log ?? (() => undefined);
  const migrations = readLocalMigrations(options.migrationsDir);
  const client = new Client({
    connectionString: options.databaseUrl,
    connectionTimeoutMillis: 10_000,
  });
  client.on('error', (error) =>
    log(`Migration connection error: ${error.message}`),
  );
  await client.connect();
  try {
    await acquireLock(client, log);
    try {
      const applied = await applyPending(client, migrations, log);
      if (options.definitionsDir !== false)
        await applyDefinitions(
          client,
          options.definitionsDir ?? join(options.migrationsDir, '..', 'sql'),
          applied.length > 0,
          log,
        );
      return { applied };
    } finally {
      await client
        .query(`SELECT pg_advisory_unlock(${ADVISORY_LOCK_KEY})`)
        .catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A session-level advisory lock: another instance migrating makes us wait (and say so), then find
 * nothing left to do. Needs a direct or session-pooled connection (not PgBouncer transaction pooling).
 */
async function acquireLock(
  client: Client,
  log: (message: string) => void,
): Promise<void> {
  const tried = await client.query<{ locked: boolean }>(
    `SELECT pg_try_advisory_lock(${ADVISORY_LOCK_KEY}) AS locked`,
  );
  if (tried.rows[0]?.locked) return;
  log(
    'Waiting for the migration lock: another instance is applying migrations',
  );
  await client.query(`SELECT pg_advisory_lock(${ADVISORY_LOCK_KEY})`);
}

/** Subdirectories of `dir` that hold a migration.sql, sorted by name (their timestamp prefix). */
export function readLocalMigrations(dir: string): LocalMigration[] {
  if (!existsSync(dir))
    throw new Error(`Migrations directory not found: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter(
      (entry) =>
        entry.isDirectory() &&
        existsSync(join(dir, entry.name, 'migration.sql')),
    )
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const bytes = readFileSync(join(dir, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: sha256(bytes) };
    });
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

async function applyPending(
  client: Client,
  migrations: LocalMigration[],
  log: (message: string) => void,
): Promise<string[]> {
  await client.query(CREATE_MIGRATIONS_TABLE);
  const rows = await readMigrationRows(client);
  assertNoFailedMigration(rows);
  const appliedRows = new Map(
    rows
      .filter((row) => row.finished_at !== null)
      .map((row) => [row.migration_name, row]),
  );
  warnAboutUnknownMigrations(migrations, [...appliedRows.keys()], log);
  const applied: string[] = [];
  for (const migration of migrations) {
    const row = appliedRows.get(migration.name);
    if (row) {
      assertUnchanged(migration, row);
      continue;
    }
    log(`Applying migration ${migration.name}`);
    await applyOne(client, migration);
    applied.push(migration.name);
  }
  log(
    applied.length === 0
      ? 'No pending migrations'
      : `Applied ${applied.length} migration(s)`,
  );
  return applied;
}

/**
 * The definitions, when the database needs them: a migration ran (it may have dropped or changed what they
 * define), the files changed since they were last applied, or a function or view of the files is missing
 * or differs. Otherwise nothing is written and nothing locked: a start with nothing to do takes no lock on
 * the view the chat reads. All files go in one transaction; a lock held elsewhere is waited for at most
 * DEFINITIONS_LOCK_TIMEOUT at a time, and the attempt repeated, for DEFINITIONS_GIVE_UP_MS in all.
 */
async function applyDefinitions(
  client: Client,
  dir: string,
  migrated: boolean,
  log: (message: string) => void,
): Promise<void> {
  const files = readDefinitions(dir);
  if (files.length === 0) {
    log(`No SQL definitions in ${dir}`);
    return;
  }
  const checksum = sha256(
    files.map((file) => `${file.name}\n${file.sql}`).join('\n'),
  );
  await client.query(CREATE_DEFINITIONS_TABLE);
  const recorded = await client.query<{ checksum: string }>(
    'SELECT checksum FROM "_sql_definitions"',
  );
  const query: Query = async <T>(text: string) =>
    (await client.query(text)).rows as T[];
  const { missing } = await compareWithFiles(query, files);
  if (
    !migrated &&
    recorded.rows[0]?.checksum === checksum &&
    missing.length === 0
  )
    return;
  await retrying(() => applyDefinitionFiles(client, files, checksum), {
    delays: doublingDelays(1_000, 8_000),
    giveUpAt: Date.now() + DEFINITIONS_GIVE_UP_MS,
    retryable: (error) =>
      (error as { code?: unknown }).code === LOCK_NOT_AVAILABLE,
    onRetry: (_error, delayMs) =>
      log(
        `SQL definitions wait for a lock held elsewhere: trying again in ${delayMs} ms`,
      ),
  });
  log(`Applied ${files.length} SQL definition file(s) from ${dir}`);
}

async function applyDefinitionFiles(
  client: Client,
  files: DefinitionFile[],
  checksum: string,
): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(
      `SET LOCAL lock_timeout = '${DEFINITIONS_LOCK_TIMEOUT}'`,
    );
    for (const file of files) {
      try {
        await client.query(file.sql);
      } catch (error) {
        if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE)
          throw error;
        throw new MigrationError(
          `SQL definitions ${file.name} failed: ${describeDbError(error, file.sql)}`,
          file.name,
        );
      }
    }
    await client.query(
      `INSERT INTO "_sql_definitions" (id, checksum) VALUES (1, $1)
       ON CONFLICT (id) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()`,
      [checksum],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

async function readMigrationRows(client: Client): Promise<MigrationRow[]> {
  const result = await client.query<MigrationRow>(
    `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations"
     WHERE rolled_back_at IS NULL ORDER BY started_at`,
  );
  return result.rows;
}

/** Applied by a newer release (e.g. during a rollback of the app): not an error, but worth a line. */
function warnAboutUnknownMigrations(
  migrations: LocalMigration[],
  appliedNames: string[],
  log: (message: string) => void,
): void {
  const local = new Set(migrations.map((migration) => migration.name));
  const unknown = appliedNames.filter((name) => !local.has(name));
  if (unknown.length > 0)
    log(
      `Applied migrations missing from the migrations directory: ${unknown.join(', ')}`,
    );
}

function assertNoFailedMigration(rows: MigrationRow[]): void {
  const failed = rows.find((row) => row.finished_at === null);
  if (!failed) return;
  throw new MigrationError(
    `Migration ${failed.migration_name} failed in a previous run and is not rolled back in "_prisma_migrations": ` +
      'repair the database, then mark the row rolled back (rolled_back_at = now()) or finished before deploying again',
    failed.migration_name,
  );
}

function assertUnchanged(migration: LocalMigration, row: MigrationRow): void {
  if (row.checksum === migration.checksum) return;
  // Prisma accepts a script whose only difference is CRLF vs LF line endings (git autocrlf checkouts).
  if (row.checksum === sha256(migration.sql.replace(/\r\n/g, '\n'))) return;
  if (row.checksum === sha256(migration.sql.replace(/\r?\n/g, '\r\n'))) return;
  throw new MigrationError(
    `Migration ${migration.name} was edited after it was applied (checksum mismatch): ` +
      'restore the original migration.sql and put the change in a new migration',
    migration.name,
  );
}

async function applyOne(
  client: Client,
  migration: LocalMigration,
): Promise<void> {
  await client.query('BEGIN');
  try {
    // One simple-protocol query: function bodies with `$$` and multiple statements stay intact.
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new MigrationError(
      `Migration ${migration.name} failed: ${describeDbError(error, migration.sql)}`,
      migration.name,
    );
  }
}

function describeDbError(error: unknown, sql: string): string {
  if (!(error instanceof Error)) return String(error);
  if (!(error instanceof DatabaseError)) return error.message;
  const position = Number(error.position);
  const where =
    Number.isInteger(position) && position > 0
      ? ` (line ${lineOf(sql, position)})`
      : '';
  const code = error.code ? ` [${error.code}]` : '';
  return `${error.message}${code}${where}`;
}

/** 1-based line of a 1-based character position, as PostgreSQL reports it. */
function lineOf(sql: string, position: number): number {
  return sql.slice(0, position - 1).split('\n').length;
}
