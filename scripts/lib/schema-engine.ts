import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
} from '@prisma/driver-adapter-utils';
import type {
  SqlDriverAdapter,
  SqlMigrationAwareDriverAdapterFactory,
  SqlQueryable,
  SqlResultSet,
} from '@prisma/driver-adapter-utils';
import type {
  DiffParams,
  SchemaContainer,
} from '@prisma/schema-engine-wasm/schema_engine_bg';
import { Pool, type PoolClient } from 'pg';
import { applyMigrations } from '../../src/infra/prisma/migrator';

// Prisma's schema engine compiled to WebAssembly (@prisma/schema-engine-wasm), driven through
// @prisma/adapter-pg. Used only to compute SQL: migrations are always applied by our own runner.

type Glue = typeof import('@prisma/schema-engine-wasm/schema_engine_bg');
type WasmEngine = Awaited<ReturnType<Glue['SchemaEngine']['new']>>;

interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (
    module: object,
    imports: Record<string, object>,
  ) => { exports: { __wbindgen_start: () => void } };
}

interface PanicRegistry {
  message: string;
  get(): string;
  set_message(message: string): void;
}

// Resolving a file (not loading it) gives the package folder; package.json itself is not exported.
const PACKAGE_DIR = dirname(
  require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'),
);
const POSTGRES_CHAR_OID = 18;
const POSTGRES_TEXT_OID = 25;
/** Prefix given to `"char"` columns on their way through pg and the adapter (NUL never occurs in a name). */
const CHAR_COLUMN_MARK = '\u0000char:';

let loadedGlue: Glue | undefined;
/** Reject functions of the engine calls in flight, told when the wasm panics (see evaluateGlue). */
const panicListeners = new Set<(error: Error) => void>();

/**
 * SQL that turns the (already migrated) database at `databaseUrl` into the Prisma schema at `schemaPath`,
 * or null when they match. Prisma's own `_prisma_migrations` table, functions and triggers are ignored.
 */
export async function diffDatabaseToSchema(options: {
  databaseUrl: string;
  schemaPath: string;
  log?: (message: string) => void;
}): Promise<string | null> {
  const files: SchemaContainer[] = [
    {
      path: options.schemaPath,
      content: readFileSync(options.schemaPath, 'utf8'),
    },
  ];
  const result = await withEngine(
    options.databaseUrl,
    files,
    options.log,
    (engine) =>
      engine.diff({
        from: {
          tag: 'schemaDatasource',
          files,
          configDir: dirname(options.schemaPath),
        },
        to: { tag: 'schemaDatamodel', files },
        script: true,
        exitCode: true,
        filters: { externalTables: [], externalEnums: [] },
      } satisfies DiffParams),
  );
  // With `exitCode: true` the engine answers 2 when the diff is non-empty, 0 when there is nothing to do.
  return result.exitCode === 2 && result.stdout ? result.stdout : null;
}

/**
 * Applies the migrations in `migrationsDir` to the EMPTY database `shadowDatabaseUrl` with our runner,
 * then diffs it against the schema: the SQL of the next migration, or null when the migrations are complete.
 */
export async function diffMigrationsToSchema(options: {
  shadowDatabaseUrl: string;
  migrationsDir: string;
  schemaPath: string;
  log?: (message: string) => void;
}): Promise<string | null> {
  try {
    await applyMigrations({
      databaseUrl: options.shadowDatabaseUrl,
      migrationsDir: options.migrationsDir,
      // Only what the migrations make: prisma/sql's views and functions (and their bookkeeping table)
      // are not Prisma's to diff.
      definitionsDir: false,
    });
  } catch (error) {
    throw new Error(
      `The existing migrations do not apply to an empty database: ${messageOf(error)}`,
      { cause: error },
    );
  }
  return diffDatabaseToSchema({
    databaseUrl: options.shadowDatabaseUrl,
    schemaPath: options.schemaPath,
    log: options.log,
  });
}

async function withEngine<T>(
  databaseUrl: string,
  files: SchemaContainer[],
  log: ((message: string) => void) | undefined,
  run: (engine: WasmEngine) => Promise<T>,
): Promise<T> {
  const glue = loadGlue();
  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('connect', markCharColumns);
  pool.on('error', (error) =>
    log?.(`schema engine connection error: ${error.message}`),
  );
  let stopListening = (): void => undefined;
  const panicked = new Promise<never>((_resolve, reject) => {
    panicListeners.add(reject);
    stopListening = () => panicListeners.delete(reject);
  });
  try {
    const engine = await Promise.race([
      glue.SchemaEngine.new(
        {
          datamodels: files.map((file): [string, string] => [
            file.path,
            file.content,
          ]),
        },
        (line: string) => forwardEngineLog(line, log),
        bindMigrationAwareSqlAdapterFactory(adapterFactory(pool)),
      ),
      panicked,
    ]);
    try {
      return await Promise.race([run(engine), panicked]);
    } finally {
      if (loadedGlue === glue) engine.free();
    }
  } catch (error) {
    throw engineError(error);
  } finally {
    stopListening();
    await pool.end();
  }
}

function adapterFactory(pool: Pool): SqlMigrationAwareDriverAdapterFactory {
  const adapter = new PrismaPg(pool);
  return {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    connect: async () => reportCharColumnsAsCharacter(await adapter.connect()),
    // Only reached for diffs from a migrations folder, which we never ask for (see diffMigrationsToSchema).
    connectToShadowDb: () =>
      Promise.reject(
        new Error('The schema engine is not given a shadow database'),
      ),
  };
}

/**
 * @prisma/adapter-pg 7.10 has no mapping for PostgreSQL's internal `"char"` type (OID 18), which the engine's
 * introspection queries return (pg_constraint.contype, confdeltype, ...): it fails with "Column type 'char' could
 * not be deserialized". The engine reads those columns as Rust chars, so they must reach it as
 * ColumnType.Character (Text makes it panic, e.g. on PostgreSQL 18's NOT NULL constraints). pg and the adapter
 * get them as `text` under a marked name; the adapter results are then retyped (reportCharColumnsAsCharacter).
 */
function markCharColumns(client: PoolClient): void {
  client.connection.prependListener('rowDescription', (message: unknown) => {
    if (!hasFields(message)) return;
    for (const field of message.fields) {
      if (field.dataTypeID !== POSTGRES_CHAR_OID) continue;
      field.dataTypeID = POSTGRES_TEXT_OID;
      field.name = `${CHAR_COLUMN_MARK}${field.name}`;
    }
  });
}

function hasFields(
  message: unknown,
): message is { fields: { name: string; dataTypeID: number }[] } {
  return (
    typeof message === 'object' &&
    message !== null &&
    Array.isArray((message as { fields?: unknown }).fields)
  );
}

/** The adapter (and its transactions) with `queryRaw` results retyped; everything else is inherited. */
function reportCharColumnsAsCharacter<T extends SqlQueryable>(queryable: T): T {
  const wrapped = Object.create(queryable) as T;
  wrapped.queryRaw = async (query) =>
    retypeCharColumns(await queryable.queryRaw(query));
  if (isDriverAdapter(wrapped) && isDriverAdapter(queryable)) {
    wrapped.startTransaction = async (isolationLevel) =>
      reportCharColumnsAsCharacter(
        await queryable.startTransaction(isolationLevel),
      );
  }
  return wrapped;
}

function isDriverAdapter(
  queryable: SqlQueryable,
): queryable is SqlDriverAdapter {
  return (
    typeof (queryable as Partial<SqlDriverAdapter>).startTransaction ===
    'function'
  );
}

function retypeCharColumns(result: SqlResultSet): SqlResultSet {
  if (!result.columnNames.some((name) => name.startsWith(CHAR_COLUMN_MARK)))
    return result;
  const marked = result.columnNames.map((name) =>
    name.startsWith(CHAR_COLUMN_MARK),
  );
  return {
    ...result,
    columnNames: result.columnNames.map((name, i) =>
      marked[i] ? name.slice(CHAR_COLUMN_MARK.length) : name,
    ),
    columnTypes: result.columnTypes.map((type, i) =>
      marked[i] ? ColumnTypeEnum.Character : type,
    ),
  };
}

/**
 * The package's entry point imports the .wasm file as an ES module, which Node (and Jest) cannot load, and its
 * glue file is ES module syntax, which Jest's CommonJS runtime cannot require. The glue is plain wasm-bindgen
 * output (`export function`/`export class` declarations only), so it is evaluated here as a function body in the
 * current realm, then wired to the instantiated wasm exactly as schema_engine.js does.
 */
function loadGlue(): Glue {
  if (loadedGlue) return loadedGlue;
  installPanicRegistry();
  const glue = evaluateGlue(
    readFileSync(join(PACKAGE_DIR, 'schema_engine_bg.js'), 'utf8'),
  );
  const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi })
    .WebAssembly;
  const wasmModule = new webAssembly.Module(
    readFileSync(join(PACKAGE_DIR, 'schema_engine_bg.wasm')),
  );
  const instance = new webAssembly.Instance(wasmModule, {
    './schema_engine_bg.js': glue,
  });
  glue.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  loadedGlue = glue;
  return glue;
}

function evaluateGlue(source: string): Glue {
  const names: string[] = [];
  const body = source.replace(
    /^export (function|class) ([A-Za-z_$][\w$]*)/gm,
    (_match, kind: string, name: string) => {
      names.push(name);
      return `${kind} ${name}`;
    },
  );
  if (/^\s*(export|import)\b/m.test(body) || !names.includes('SchemaEngine')) {
    throw new Error(
      'Unexpected format of @prisma/schema-engine-wasm/schema_engine_bg.js: update scripts/lib/schema-engine.ts',
    );
  }
  // The glue runs the engine's async tasks through queueMicrotask: a Rust panic inside one would be thrown
  // from the microtask as an uncaught exception and leave the engine's promise pending forever. The glue
  // gets a queueMicrotask that turns such a throw into a rejection of the calls in flight instead.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the glue must run in this realm (Jest's sandbox under Jest), which vm would not give; see loadGlue
  const factory = new Function(
    'queueMicrotask',
    `"use strict";\n${body}\nreturn { ${names.join(', ')} };`,
  ) as (queue: (callback: () => void) => void) => Glue;
  return factory((callback) => queueMicrotask(() => runGuarded(callback)));
}

function runGuarded(callback: () => void): void {
  try {
    callback();
  } catch (error) {
    // A panicked wasm instance is unusable: the next call loads a fresh one.
    loadedGlue = undefined;
    const failure = error instanceof Error ? error : new Error(String(error));
    for (const listener of [...panicListeners]) listener(failure);
    if (panicListeners.size === 0) throw error;
  }
}

/** Same registry as Prisma's CLI (shared with Prisma Client's wasm): a panic message is written here before the trap. */
function installPanicRegistry(): void {
  const holder = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: PanicRegistry };
  holder.PRISMA_WASM_PANIC_REGISTRY ??= {
    message: '',
    get() {
      return this.message;
    },
    set_message(message: string) {
      this.message = `RuntimeError: ${message}`;
    },
  };
}

function engineError(error: unknown): Error {
  const registry = (
    globalThis as { PRISMA_WASM_PANIC_REGISTRY?: PanicRegistry }
  ).PRISMA_WASM_PANIC_REGISTRY;
  const panic = registry?.get();
  if (registry && panic) {
    registry.message = '';
    return new Error(`The schema engine panicked: ${panic}`);
  }
  // Engine errors carry a Rust span trace ("   0: sql_schema_connector::...") after the message.
  return new Error(
    `Schema engine: ${messageOf(error)
      .split(/\n\s+0: /)[0]
      .trim()}`,
  );
}

function forwardEngineLog(
  line: string,
  log: ((message: string) => void) | undefined,
): void {
  if (!log) return;
  try {
    const entry = JSON.parse(line) as {
      level?: string;
      fields?: { message?: string };
    };
    if (entry.level === 'WARN' || entry.level === 'ERROR')
      log(`schema engine ${entry.level}: ${entry.fields?.message}`);
  } catch {
    log(`schema engine: ${line}`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
