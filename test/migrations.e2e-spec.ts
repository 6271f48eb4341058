import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { applyMigrations } from '../src/infra/prisma/migrator';
import { sql } from './support/sql';
import { childEnv } from './support/service-process';
import { diffMigrationsToSchema } from '../scripts/lib/schema-engine';
import {
  createScratchDatabase,
  withDatabase,
  type ScratchDatabase,
} from '../scripts/lib/scratch-database';

const MIGRATIONS_DIR = resolve(__dirname, '..', 'prisma', 'migrations');
const SCHEMA_PATH = resolve(__dirname, '..', 'prisma', 'schema.prisma');
const SERVER_URL = withDatabase(serverUrl(), 'postgres');

/** The run's PostgreSQL server (global-setup). */
function serverUrl(): string {
  const url = process.env.TEST_DATABASE_SERVER_URL;
  if (!url)
    throw new Error(
      'TEST_DATABASE_SERVER_URL is not set: run the tests through jest (global-setup)',
    );
  return url;
}

const committed = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe('database migrations', () => {
  const scratch: ScratchDatabase[] = [];
  const tempDir = mkdtempSync(join(tmpdir(), 'migrations-spec-'));

  async function freshDatabase(): Promise<string> {
    const database = await createScratchDatabase(SERVER_URL, 'migrations_spec');
    scratch.push(database);
    return database.url;
  }

  /** A copy of the committed migrations that a test may change. */
  function copyOfMigrations(name: string): string {
    const dir = join(tempDir, name);
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    return dir;
  }

  afterAll(async () => {
    await Promise.all(scratch.map((database) => database.drop()));
    rmSync(tempDir, { recursive: true, force: true });
  });

  it('has committed migrations', () => {
    expect(committed.length).toBeGreaterThan(0);
  });

  it('has an index under every foreign key, so deleting a parent row never scans the child table', async () => {
    const url = await freshDatabase();
    await applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS_DIR });
    // A foreign key's columns must lead some index (a partial one holding every non-null value counts).
    const unindexed = await sql<{ key: string; onDelete: string }>(
      `SELECT c.conrelid::regclass::text || '.' || c.conname AS key, c.confdeltype AS "onDelete"
         FROM pg_constraint c
        WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
          AND NOT EXISTS (
                SELECT 1 FROM pg_index i
                 WHERE i.indrelid = c.conrelid AND i.indisvalid
                   AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
                   AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey
                   -- a partial index counts when it holds every row with a value in the key's own column
                   AND (i.indpred IS NULL
                        OR (cardinality(c.conkey) = 1
                            AND pg_get_expr(i.indpred, i.indrelid) =
                                '(' || (SELECT quote_ident(a.attname) FROM pg_attribute a
                                         WHERE a.attrelid = c.conrelid AND a.attnum = c.conkey[1])
                                    || ' IS NOT NULL)')))
        ORDER BY 1`,
      [],
      url,
    );
    // Plans are deactivated, never deleted (catalog sync): their RESTRICT checks never run.
    expect(
      unindexed.filter(
        (fk) => !(fk.onDelete === 'r' && fk.key.endsWith('_planCode_fkey')),
      ),
    ).toEqual([]);
  });

  it('applies every migration exactly once when two instances start at the same time', async () => {
    const url = await freshDatabase();
    const runs = await Promise.all([
      applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS_DIR }),
      applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS_DIR }),
    ]);
    expect([...runs[0].applied, ...runs[1].applied].sort()).toEqual(committed);

    const rows = await query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>(
      url,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(rows.map((row) => row.migration_name)).toEqual(committed);
    for (const row of rows) {
      expect(row.checksum).toBe(
        sha256(
          readFileSync(
            join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'),
          ),
        ),
      );
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
    }

    await expect(
      applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS_DIR }),
    ).resolves.toEqual({ applied: [] });
  });

  it('refuses a migration that was edited after it was applied', async () => {
    const url = await freshDatabase();
    const dir = copyOfMigrations('edited');
    await applyMigrations({ databaseUrl: url, migrationsDir: dir });
    const edited = committed[committed.length - 1];
    appendFileSync(
      join(dir, edited, 'migration.sql'),
      '\n-- edited after apply\n',
    );

    await expect(
      applyMigrations({ databaseUrl: url, migrationsDir: dir }),
    ).rejects.toThrow(
      new RegExp(`Migration ${edited} was edited after it was applied`),
    );
  });

  it('rolls back a failing migration completely and names it', async () => {
    const url = await freshDatabase();
    const dir = copyOfMigrations('broken');
    const broken = '99991231235959_broken';
    mkdirSync(join(dir, broken));
    writeFileSync(
      join(dir, broken, 'migration.sql'),
      'CREATE TABLE "PartialTable" ("id" INTEGER);\nINSERT INTO "MissingTable" VALUES (1);\n',
    );

    const run = applyMigrations({ databaseUrl: url, migrationsDir: dir });
    await expect(run).rejects.toThrow(
      `Migration ${broken} failed: relation "MissingTable" does not exist`,
    );

    const rows = await query<{ migration_name: string }>(
      url,
      'SELECT migration_name FROM "_prisma_migrations"',
    );
    expect(rows.map((row) => row.migration_name).sort()).toEqual(committed);
    const tables = await query(
      url,
      `SELECT 1 FROM information_schema.tables WHERE table_name = 'PartialTable'`,
    );
    expect(tables).toHaveLength(0);
  });

  it('refuses to run while a migration is recorded as failed', async () => {
    const url = await freshDatabase();
    await applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS_DIR });
    await query(
      url,
      `UPDATE "_prisma_migrations" SET finished_at = NULL WHERE migration_name = $1`,
      [committed[0]],
    );

    await expect(
      applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS_DIR }),
    ).rejects.toThrow(`Migration ${committed[0]} failed in a previous run`);
  });

  it('has no drift: the committed migrations produce exactly prisma/schema.prisma', async () => {
    const shadowDatabaseUrl = await freshDatabase();
    const sql = await diffMigrationsToSchema({
      shadowDatabaseUrl,
      migrationsDir: MIGRATIONS_DIR,
      schemaPath: SCHEMA_PATH,
    });
    if (sql !== null) {
      throw new Error(
        `prisma/schema.prisma differs from prisma/migrations: run npm run db:migrate:create -- <name>\n${sql}`,
      );
    }
  });

  it('npm run db:migrate applies the migrations to DATABASE_URL, and a second run finds nothing to do', async () => {
    const url = await freshDatabase();
    const migrate = () =>
      spawnSync(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', 'scripts/db.ts', 'migrate'],
        {
          cwd: resolve(__dirname, '..'),
          env: childEnv({ DATABASE_URL: url }),
          encoding: 'utf8',
        },
      );
    expect(migrate().status).toBe(0);
    const rows = await query<{ migration_name: string }>(
      url,
      'SELECT migration_name FROM "_prisma_migrations" ORDER BY 1',
    );
    expect(rows.map((row) => row.migration_name)).toEqual(committed);
    const again = migrate();
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('No pending migrations');
  }, 60_000);

  it('npm run db:migrate:create writes the next migration from a schema change, then finds nothing more', () => {
    const prismaDir = join(tempDir, 'create');
    cpSync(resolve(__dirname, '..', 'prisma'), prismaDir, { recursive: true });
    const schema = readFileSync(join(prismaDir, 'schema.prisma'), 'utf8');
    writeFileSync(
      join(prismaDir, 'schema.prisma'),
      schema.replace(/(model User \{\n)/, '$1  nickname String?\n'),
    );
    const create = () =>
      spawnSync(
        process.execPath,
        [
          '-r',
          'ts-node/register/transpile-only',
          'scripts/db.ts',
          'create',
          'add_nickname',
        ],
        {
          cwd: resolve(__dirname, '..'),
          env: childEnv({ PRISMA_DIR: prismaDir, DATABASE_URL: SERVER_URL }),
          encoding: 'utf8',
        },
      );

    const first = create();
    expect(first.status).toBe(0);
    const created = readdirSync(join(prismaDir, 'migrations')).filter((name) =>
      name.endsWith('_add_nickname'),
    );
    expect(created).toHaveLength(1);
    expect(created[0]).toMatch(/^\d{14}_add_nickname$/);
    expect(
      readFileSync(
        join(prismaDir, 'migrations', created[0], 'migration.sql'),
        'utf8',
      ),
    ).toContain('ALTER TABLE "User" ADD COLUMN     "nickname" TEXT');

    const second = create();
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('No schema changes');
  }, 60_000);

  it('enforces the rules kept in the database: immutable versions, non-negative credits, kept ledger', async () => {
    const url = await freshDatabase();
    await applyMigrations({ databaseUrl: url, migrationsDir: MIGRATIONS_DIR });
    await query(
      url,
      `INSERT INTO "Plan" (code, name, "priceAmount", "priceCurrency", "dailyCredits", "storageQuotaBytes", "checkoutAllowed", "sortOrder", "updatedAt")
         VALUES ('spec', 'Spec', 0, 'USD', 0, 0, false, 0, now());
       INSERT INTO "User" (id, email, "planCode", "updatedAt")
         VALUES ('00000000-0000-7000-8000-000000000001', 'spec@example.com', 'spec', now());
       INSERT INTO "Skill" (id, "ownerId", name, "updatedAt")
         VALUES ('00000000-0000-7000-8000-000000000002', '00000000-0000-7000-8000-000000000001', 'Spec', now());
       INSERT INTO "SkillVersion" (id, "skillId", number, instruction)
         VALUES ('00000000-0000-7000-8000-000000000003', '00000000-0000-7000-8000-000000000002', 1, 'original')`,
    );

    await expect(
      query(url, `UPDATE "SkillVersion" SET instruction = 'changed'`),
    ).rejects.toMatchObject({
      message: 'skill versions are immutable',
      code: 'P0001',
    });
    const rows = await query<{ instruction: string }>(
      url,
      'SELECT instruction FROM "SkillVersion"',
    );
    expect(rows).toEqual([{ instruction: 'original' }]);

    // Credits never go negative, whatever a buggy conditional update tries.
    await query(
      url,
      `INSERT INTO "DailyUsage" ("userId", day) VALUES ('00000000-0000-7000-8000-000000000001', '2026-01-01')`,
    );
    await expect(
      query(url, `UPDATE "DailyUsage" SET reserved = reserved - 1`),
    ).rejects.toMatchObject({ code: '23514' });
    // Money records keep their user: deleting a user with ledger entries is refused.
    await query(
      url,
      `INSERT INTO "LedgerEntry" (id, "userId", kind, status, credits) VALUES ('00000000-0000-7000-8000-000000000004', '00000000-0000-7000-8000-000000000001', 'usage', 'completed', 1)`,
    );
    await expect(query(url, `DELETE FROM "User"`)).rejects.toMatchObject({
      code: expect.stringMatching(/^(23001|23503)$/),
    }); // restrict_violation (PG 18) or foreign_key_violation (PG 15)
  });
});

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

const query = <T = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
) => sql<T>(text, values, url);
