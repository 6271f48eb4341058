import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { applyMigrations } from '../src/infra/prisma/migrator';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { sql } from './support/sql';
import { bootTestApp } from './support/test-app';
import { definedInFiles, definitionDrift } from './support/sql-definitions';
import {
  createMigratedDatabase,
  MIGRATIONS_DIR,
} from './support/test-database';

const DEFINITIONS_DIR = resolve(__dirname, '..', 'prisma', 'sql');

/**
 * The views and functions have one source, prisma/sql: the migrator applies the files after the
 * migrations, and a database whose functions differ from them is found.
 */
describe('SQL definitions (prisma/sql)', () => {
  let database: ScratchDatabase;
  beforeAll(async () => {
    database = await createMigratedDatabase('chat_sql_definitions');
  });
  afterAll(() => database.drop());

  it('define every function of a migrated database, body for body, and nothing else is there', async () => {
    const files = definedInFiles(DEFINITIONS_DIR);
    expect(files.functions.map((fn) => fn.name)).toEqual(
      expect.arrayContaining([
        'chat_claim',
        'chat_claim_many',
        'chat_settle_many',
        'chat_request_by_key',
        'notify_users_changed',
        'skill_version_immutable',
      ]),
    );
    expect(files.views).toEqual(['chat_stored_runs']);
    expect(await definitionDrift(database.url, DEFINITIONS_DIR)).toEqual([]);
    expect(
      await definitionDrift(
        process.env.TEST_DATABASE_URL as string,
        DEFINITIONS_DIR,
      ),
    ).toEqual([]);
  });

  it('find a function edited in place, one dropped and one no file defines; the migrator restores the files', async () => {
    await sql(
      `CREATE OR REPLACE FUNCTION "skill_version_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END; $$`,
      [],
      database.url,
    );
    await sql(
      `DROP FUNCTION "chat_request_by_key"(uuid, text)`,
      [],
      database.url,
    );
    await sql(
      `CREATE FUNCTION "stray_helper"() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$`,
      [],
      database.url,
    );
    // Same bodies, attributes reset (as a previous release re-applying its own files does).
    await sql(
      `ALTER FUNCTION "chat_settle_many"(jsonb) RESET enable_seqscan`,
      [],
      database.url,
    );
    await sql(
      `ALTER FUNCTION "chat_claim_many"(jsonb) ROWS 1000`,
      [],
      database.url,
    );
    expect(
      (await definitionDrift(database.url, DEFINITIONS_DIR)).sort(),
    ).toEqual([
      'function chat_claim_many of the files is not in the database',
      'function chat_claim_many(p_claims jsonb) is not as any file defines it',
      'function chat_request_by_key of the files is not in the database',
      'function chat_settle_many of the files is not in the database',
      'function chat_settle_many(p_runs jsonb) is not as any file defines it',
      'function skill_version_immutable of the files is not in the database',
      'function skill_version_immutable() is not as any file defines it',
      'function stray_helper() is not as any file defines it',
    ]);
    await applyMigrations({
      databaseUrl: database.url,
      migrationsDir: MIGRATIONS_DIR,
    });
    expect(await definitionDrift(database.url, DEFINITIONS_DIR)).toEqual([
      'function stray_helper() is not as any file defines it',
    ]);
  });

  it('are left alone by a migrator run with nothing to do: no lock on the view the chat reads', async () => {
    // A transaction elsewhere reading the view holds a lock CREATE OR REPLACE VIEW would wait for.
    const reader = new Client({ connectionString: database.url });
    await reader.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT 1 FROM chat_stored_runs LIMIT 1');
      const logs: string[] = [];
      await applyMigrations({
        databaseUrl: database.url,
        migrationsDir: MIGRATIONS_DIR,
        log: (line) => logs.push(line),
      });
      expect(logs).toEqual(['No pending migrations']);
    } finally {
      await reader.query('ROLLBACK');
      await reader.end();
    }
  });

  it('keep the array signatures of the previous release working, for its instances during a rolling update', async () => {
    // The catalog (plans, models) comes with the service's start.
    await (await bootTestApp({ DATABASE_URL: database.url })).close();
    const [user] = await sql<{ id: string }>(
      `INSERT INTO "User" (id, email, "planCode", "updatedAt") VALUES (gen_random_uuid(), $1, 'pro', now()) RETURNING id::text`,
      [`${randomUUID()}@example.com`],
      database.url,
    );
    const [runId, conversationId] = [randomUUID(), randomUUID()];
    const claimed = await sql<{ n: number; outcome: string }>(
      `SELECT n, outcome FROM chat_claim_many($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::boolean[],
              $7::text[], $8::text[], $9::uuid[], $10::uuid[], $11::date[], $12::int[], $13::int[])`,
      [
        [runId],
        [user.id],
        ['old-key'],
        ['fp'],
        [conversationId],
        [true],
        ['Old'],
        ['openai/gpt-4o-mini'],
        [null],
        [null],
        [new Date().toISOString().slice(0, 10)],
        [3],
        [60_000],
      ],
      database.url,
    );
    expect(claimed).toEqual([{ n: 1, outcome: 'claimed' }]);
    const settled = await sql<{ n: number }>(
      `SELECT n FROM chat_settle_many($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::boolean[],
              $7::uuid[], $8::uuid[], $9::text[], $10::int[], $11::int[], $12::int[], $13::uuid[], $14::boolean[],
              $15::uuid[], $16::int[], $17::uuid[], $18::text[], $19::text[])`,
      [
        [runId],
        ['completed'],
        ['Hi'],
        [null],
        [new Date()],
        [true],
        [null],
        [null],
        ['openai/gpt-4o-mini'],
        [4],
        [1],
        [2],
        [randomUUID()],
        [false],
        [null],
        [1, 1],
        [randomUUID(), randomUUID()],
        ['user', 'assistant'],
        ['Hello', 'Hi'],
      ],
      database.url,
    );
    expect(settled).toEqual([{ n: 1 }]);
    expect(
      await sql(
        `SELECT role::text, content FROM "Message" WHERE "conversationId" = $1 ORDER BY seq`,
        [conversationId],
        database.url,
      ),
    ).toEqual([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi' },
    ]);
    expect(
      await sql(
        `SELECT used, reserved FROM "DailyUsage" WHERE "userId" = $1`,
        [user.id],
        database.url,
      ),
    ).toEqual([{ used: 2, reserved: 0 }]);
  });
});
