import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The views' and functions' definitions of prisma/sql, and how a database differs from them.
 * docs/adr/0060-sql-definitions-in-files.md
 */

export interface DefinitionFile {
  name: string;
  sql: string;
}

interface FunctionDefinition {
  name: string;
  body: string;
  /**
   * The attributes that change how it is planned and run, as `rows=8;enable_seqscan=off` (sorted; rows only
   * when the file declares them): a release that re-applies its own files resets them with the same body
   * (docs/adr/0066).
   */
  attributes: string;
}

/** `ROWS n` and every `SET name = value` of a function's header (what precedes `AS $$`). */
function headerAttributes(header: string): { rows?: number; config: string[] } {
  const rows = /\bROWS\s+(\d+)/.exec(header);
  const config = [...header.matchAll(/\bSET\s+(\w+)\s*=\s*'?(\w+)'?/g)].map(
    (match) => `${match[1]}=${match[2]}`,
  );
  // 1000 and 0 are PostgreSQL's defaults: declared or not, the database holds the same.
  const declared = rows && !['0', '1000'].includes(rows[1]);
  return { ...(declared ? { rows: Number(rows[1]) } : {}), config };
}

function attributeKey(rows: number | undefined, config: string[]): string {
  return [
    ...(rows === undefined ? [] : [`rows=${rows}`]),
    ...config.sort(),
  ].join(';');
}

/** Runs one read-only query and answers its rows. */
export type Query = <T>(text: string) => Promise<T[]>;

/** The `.sql` files of `dir` (none when it does not exist), sorted by name: the order they are applied in. */
export function readDefinitions(dir: string): DefinitionFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }));
}

/** The functions (with their bodies, as PostgreSQL keeps them) and views the files define. */
export function definedObjects(files: DefinitionFile[]): {
  functions: FunctionDefinition[];
  views: string[];
} {
  const text = files.map((file) => file.sql).join('\n');
  const functions = [
    ...text.matchAll(
      /CREATE OR REPLACE FUNCTION "([a-z_]+)"\(([\s\S]*?)\bAS \$\$([\s\S]*?)\$\$;/g,
    ),
  ].map((match) => {
    const { rows, config } = headerAttributes(match[2]);
    return {
      name: match[1],
      body: match[3],
      attributes: attributeKey(rows, config),
    };
  });
  const views = [...text.matchAll(/CREATE OR REPLACE VIEW "([a-z_]+)"/g)].map(
    (match) => match[1],
  );
  return { functions, views };
}

/**
 * How the database's functions and views differ from the files: a function whose body no file of its name
 * has (edited in place, or an overload no file defines: `extra`), a file's function or view the database
 * lacks or holds with another body (`missing`).
 */
export async function compareWithFiles(
  query: Query,
  files: DefinitionFile[],
): Promise<{ extra: string[]; missing: string[] }> {
  const defined = definedObjects(files);
  const functions = await query<{
    name: string;
    args: string;
    body: string;
    /** 1000 by default for a set-returning function, 0 for any other. */
    rows: number;
    config: string[] | null;
  }>(
    `SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args, p.prosrc AS body,
            p.prorows::float8 AS rows, p.proconfig AS config
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public'
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`,
  );
  const inDatabase = functions.map((fn) => ({
    name: fn.name,
    args: fn.args,
    body: fn.body,
    // The defaults count as undeclared, as a file that declares no ROWS has them.
    attributes: attributeKey(
      fn.rows === 0 || fn.rows === 1000 ? undefined : fn.rows,
      fn.config ?? [],
    ),
  }));
  const views = await query<{ name: string }>(
    `SELECT viewname AS name FROM pg_views WHERE schemaname = 'public'`,
  );
  const same = (a: FunctionDefinition, b: FunctionDefinition) =>
    a.name === b.name && a.body === b.body && a.attributes === b.attributes;
  return {
    extra: inDatabase
      .filter((fn) => !defined.functions.some((file) => same(file, fn)))
      .map(
        (fn) => `function ${fn.name}(${fn.args}) is not as any file defines it`,
      ),
    missing: [
      ...defined.functions
        .filter((file) => !inDatabase.some((fn) => same(file, fn)))
        .map(
          (file) => `function ${file.name} of the files is not in the database`,
        ),
      ...defined.views
        .filter((name) => !views.some((view) => view.name === name))
        .map((name) => `view ${name} of the files is not in the database`),
    ],
  };
}

/** Every difference compareWithFiles finds, as one list. */
export async function definitionDrift(
  query: Query,
  files: DefinitionFile[],
): Promise<string[]> {
  const { extra, missing } = await compareWithFiles(query, files);
  return [...extra, ...missing];
}
