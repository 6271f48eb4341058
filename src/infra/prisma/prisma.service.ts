import { OnModuleDestroy } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, PoolClient } from 'pg';
import { PoolUsage } from '../metrics/metrics';
import { Prisma, PrismaClient } from './generated/client';

/** A statement run through `PrismaService.statement` (one round trip, straight on the pool). */
export interface PreparedStatement {
  /**
   * Named: parsed and planned once per connection, that plan kept. Leave it out for a statement whose best
   * plan depends on how big the tables are: a kept plan made while they were small scans them whole ever
   * after where autovacuum never analyzes (docs/adr/0066); unnamed, it is planned at each execution.
   */
  name?: string;
  text: string;
}

/**
 * The Prisma client of the service, on the node-postgres driver adapter over a pool this class owns. Only
 * repositories use it. The few statements every chat run sends (key lookup, history, claim, settlement)
 * go to the same pool as named prepared statements through `statement()`: one round trip each, parsed and
 * planned once per connection, without the client's per-query work (docs/adr/0030-group-commit.md).
 */
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  private readonly pool: Pool;
  /** performance.now() of every connection request not yet answered, oldest first (Map keeps insertion order). */
  private readonly waiting: Map<object, number>;

  constructor(databaseUrl: string, poolSize: number) {
    const pool = new Pool({
      connectionString: databaseUrl,
      max: poolSize,
      connectionTimeoutMillis: 5_000,
    });
    // An idle connection that dies (a database restart) is dropped by the pool; the next query reports it.
    pool.on('error', () => undefined);
    const waiting = timeWaitsForConnections(pool);
    super({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
    this.pool = pool;
    this.waiting = waiting;
  }

  /** How long the oldest request for a pool connection still unanswered has waited (0 when none waits). */
  oldestConnectionWaitMs(): number {
    for (const since of this.waiting.values()) return performance.now() - since;
    return 0;
  }

  /** Runs a hot-path statement with positional parameters ($1...) and answers its rows. */
  async statement<Row>(
    prepared: PreparedStatement,
    values: unknown[],
  ): Promise<Row[]> {
    const result = await this.pool.query({
      ...(prepared.name ? { name: prepared.name } : {}),
      text: prepared.text,
      values,
    });
    return result.rows as Row[];
  }

  /** The pool's connections and waiting queries now (read by the metrics at scrape time). */
  poolUsage(): PoolUsage {
    return {
      total: this.pool.totalCount,
      idle: this.pool.idleCount,
      waiting: this.pool.waitingCount,
      max: this.pool.options.max,
    };
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}

/** A client usable inside or outside an interactive transaction: repositories take it as `db`. */
export type Db = Prisma.TransactionClient;

type ConnectCallback = (
  error: Error | undefined,
  client: PoolClient | undefined,
  release: (error?: Error | boolean) => void,
) => void;

/**
 * Notes when each request for a connection starts and ends, so admission control can see the pool's wait
 * (docs/adr/0065-adaptive-admission.md). pg-pool's own query() asks for its connection through
 * `this.connect(callback)`, and Prisma's adapter through `pool.connect()`: both pass here.
 */
function timeWaitsForConnections(pool: Pool): Map<object, number> {
  const waiting = new Map<object, number>();
  const connect = pool.connect.bind(pool) as (
    callback?: ConnectCallback,
  ) => Promise<PoolClient> | undefined;
  const timed = (callback?: ConnectCallback) => {
    const request = {};
    waiting.set(request, performance.now());
    const answered = () => waiting.delete(request);
    if (callback)
      return connect((error, client, release) => {
        answered();
        callback(error, client, release);
      });
    return connect()!.finally(answered);
  };
  pool.connect = timed as Pool['connect'];
  return waiting;
}
