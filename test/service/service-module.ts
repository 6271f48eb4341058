import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Test, TestingModule } from '@nestjs/testing';
import { AppModule } from '../../src/app.module';
import { SessionUser } from '../../src/auth/session-user';
import { createRootLogger } from '../../src/common/logging/logger';
import { loadConfig } from '../../src/config/load-config';
import { ModelProvider } from '../../src/models/providers/model-provider';
import { ProviderEndpoints } from '../../src/models/provider-endpoints';
import { ScratchDatabase } from '../../scripts/lib/scratch-database';
import { sql } from '../support/sql';
import { testEnv } from '../support/test-app';
import { createMigratedDatabase } from '../support/test-database';

/** The real AppModule, without HTTP, on a database of its own, with `provider` answering every model. */
export interface ServiceModule {
  moduleRef: TestingModule;
  database: ScratchDatabase;
  db: <T = Record<string, unknown>>(
    query: string,
    values?: unknown[],
  ) => Promise<T[]>;
  /** A new account (inserted with SQL) as the services receive their caller. */
  newUser: (planCode?: string) => Promise<SessionUser>;
  close: () => Promise<void>;
}

export async function bootServiceModule(
  name: string,
  provider?: ModelProvider,
  env: Record<string, string> = {},
): Promise<ServiceModule> {
  const database = await createMigratedDatabase(name);
  const config = loadConfig(testEnv({ DATABASE_URL: database.url, ...env }));
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  let builder = Test.createTestingModule({
    imports: [AppModule.forRoot(config, createRootLogger('silent', silent))],
  });
  if (provider)
    builder = builder
      .overrideProvider(ProviderEndpoints)
      .useValue(oneEndpoint(provider));
  const moduleRef = await builder.compile();
  await moduleRef.init();
  const db = <T = Record<string, unknown>>(query: string, values?: unknown[]) =>
    sql<T>(query, values, database.url);
  return {
    moduleRef,
    database,
    db,
    newUser: async (planCode = 'pro') => {
      const email = `${randomUUID()}@example.com`;
      const [row] = await db<{ id: string; createdAt: Date }>(
        `INSERT INTO "User" (id, email, "planCode", "updatedAt") VALUES (gen_random_uuid(), $1, $2, now())
         RETURNING id::text, "createdAt"`,
        [email, planCode],
      );
      return {
        id: row.id,
        email,
        role: 'user',
        planCode,
        planName: planCode,
        createdAt: row.createdAt,
        emailVerified: true,
        twoFactorEnabled: false,
        signedInAt: new Date(),
        sessionTokenHash: 'not-a-session',
      };
    },
    close: async () => {
      await moduleRef.close();
      await database.drop();
    },
  };
}

/** ProviderEndpoints with one endpoint, without key, serving every model with `provider`. */
function oneEndpoint(provider: ModelProvider): Partial<ProviderEndpoints> {
  const keys = [{ label: 'none', fingerprint: 'none' }];
  const endpoint = { id: 'test', kind: 'openai' as const, provider, keys };
  return {
    configured: () => endpoint,
    find: () => endpoint,
    nextKey: () => keys[0],
    coolDown: () => undefined,
    describe: () => [],
  };
}
