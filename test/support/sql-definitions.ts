import { readDefinitions } from '../../src/infra/prisma/migrator';
import { sql } from './sql';

interface FunctionDefinition {
  name: string;
  body: string;
}

/** The functions and views the files of `dir` define (prisma/sql). */
export function definedInFiles(dir: string): {
  functions: FunctionDefinition[];
  views: string[];
} {
  const text = readDefinitions(dir)
    .map((definition) => definition.sql)
    .join('\n');
  const functions = [
    ...text.matchAll(
      /CREATE OR REPLACE FUNCTION "([a-z_]+)"\([\s\S]*?\bAS \$\$([\s\S]*?)\$\$;/g,
    ),
  ].map((match) => ({ name: match[1], body: match[2] }));
  const views = [...text.matchAll(/CREATE OR REPLACE VIEW "([a-z_]+)"/g)].map(
    (match) => match[1],
  );
  return { functions, views };
}

/**
 * How the database's functions and views differ from the files: a function whose body no file of its name
 * has (edited in place, or an overload no file defines), a file's function or view the database lacks.
 */
export async function definitionDrift(
  databaseUrl: string,
  dir: string,
): Promise<string[]> {
  const files = definedInFiles(dir);
  const inDatabase = await sql<FunctionDefinition & { args: string }>(
    `SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args, p.prosrc AS body
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public'
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`,
    [],
    databaseUrl,
  );
  const views = await sql<{ name: string }>(
    `SELECT viewname AS name FROM pg_views WHERE schemaname = 'public'`,
    [],
    databaseUrl,
  );
  const same = (a: FunctionDefinition, b: FunctionDefinition) =>
    a.name === b.name && a.body === b.body;
  return [
    ...inDatabase
      .filter((fn) => !files.functions.some((file) => same(file, fn)))
      .map(
        (fn) => `function ${fn.name}(${fn.args}) is not as any file defines it`,
      ),
    ...files.functions
      .filter((file) => !inDatabase.some((fn) => same(file, fn)))
      .map(
        (file) => `function ${file.name} of the files is not in the database`,
      ),
    ...files.views
      .filter((name) => !views.some((view) => view.name === name))
      .map((name) => `view ${name} of the files is not in the database`),
  ];
}
