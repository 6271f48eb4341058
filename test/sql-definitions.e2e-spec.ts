import { resolve } from 'node:path';
import { applyMigrations } from '../src/infra/prisma/migrator';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { sql } from './support/sql';
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
    expect(
      (await definitionDrift(database.url, DEFINITIONS_DIR)).sort(),
    ).toEqual([
      'function chat_request_by_key of the files is not in the database',
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
});
