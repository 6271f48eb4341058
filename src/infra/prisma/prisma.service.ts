import { OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { PoolUsage } from '../metrics/metrics';
import { Prisma, PrismaClient } from './generated/client';

/** A statement run through `PrismaService.statement`: prepared once per connection under its name. */
export interface PreparedStatement {
  name: string;
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

  constructor(databaseUrl: string, poolSize: number) {
    const pool = new Pool({
      connectionString: databaseUrl,
      max: poolSize,
      connectionTimeoutMillis: 5_000,
    });
    // An idle connection that dies (a database restart) is dropped by the pool; the next query reports it.
    pool.on('error', () => undefined);
    super({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
    this.pool = pool;
  }

  /** Runs a hot-path statement with positional parameters ($1...) and answers its rows. */
  async statement<Row>(
    prepared: PreparedStatement,
    values: unknown[],
  ): Promise<Row[]> {
    const result = await this.pool.query({
      name: prepared.name,
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
