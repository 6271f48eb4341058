import { OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from './generated/client';

/** The Prisma client of the service, on the node-postgres driver adapter. Only repositories use it. */
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(databaseUrl: string, poolSize: number) {
    super({ adapter: new PrismaPg({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 5_000 }) });
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}

/** A client usable inside or outside an interactive transaction: repositories take it as `db`. */
export type Db = Prisma.TransactionClient;
