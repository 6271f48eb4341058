import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { CHAT_RUN_STATEMENTS } from '../src/chat/chat-requests.repository';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { chat, listen } from './support/chat-client';
import { registerUser } from './support/factories';
import { FakeModelServer } from './support/fake-model-servers';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { createMigratedDatabase } from './support/test-database';

/** Rows seeded per table: enough that scanning a table costs the planner more than a few index lookups. */
const SEEDED = 4_000;

/** The tables a chat reads and writes, which grow with every chat ever made. */
const GROWING_TABLES = [
  'ChatRequest',
  'LedgerEntry',
  'Message',
  'Conversation',
  'DailyUsage',
];
const GROWING = new RegExp(`Seq Scan on "(${GROWING_TABLES.join('|')})"`, 'g');

/**
 * What PostgreSQL does for the statements of a chat (the claim, the settlement, the reads by key and id, the
 * lease renewal) and for every statement inside the functions they call (auto_explain, nested statements):
 * nothing may scan a table that grows with every chat. The plans a connection keeps are made while the
 * tables are nearly empty and checked after they have grown, unanalyzed, as on a server where autovacuum is
 * off. The claim once joined its answer to the stored runs by hashing all of ChatRequest and LedgerEntry,
 * and kept plans made on empty tables scanned them whole, so each chat cost more than the one before it
 * (docs/adr/0066).
 */
describe('query plans of a chat', () => {
  let fake: FakeModelServer;
  let database: ScratchDatabase;
  let t: TestApp;
  let userId: string;
  let client: Client;
  const plans: string[] = [];

  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    database = await createMigratedDatabase('chat_query_plans');
    t = await bootTestApp({
      DATABASE_URL: database.url,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
    });
    const base = await listen(t);
    const user = await registerUser(t.http);
    userId = user.id;
    fake.mode = { kind: 'ok', words: ['seed'] };
    const res = await chat(base, user.cookie, {
      model: 'openai/gpt-4o-mini',
      idempotencyKey: randomUUID(),
      messages: [{ role: 'user', content: 'a first chat' }],
    }).response;
    expect(res.status).toBe(200);
    client = new Client({ connectionString: database.url });
    await client.connect();
    client.on('notice', (notice) => plans.push(notice.message ?? ''));
    for (const setting of [
      "LOAD 'auto_explain'",
      'SET auto_explain.log_min_duration = 0',
      'SET auto_explain.log_nested_statements = on',
      "SET auto_explain.log_level = 'notice'",
      "SET client_min_messages = 'notice'",
      // As a connection that ran a statement more than five times plans it (and the functions' statements).
      "SET plan_cache_mode = 'force_generic_plan'",
    ])
      await client.query(setting);
    // The plans this connection keeps are made now, while the tables hold one chat: as on a service that
    // started on an empty database, where autovacuum never analyzes and so never has them made again
    // (turned off for these tables here, whatever the server's setting: an ANALYZE would make them again).
    for (const table of GROWING_TABLES)
      await sql(
        `ALTER TABLE "${table}" SET (autovacuum_enabled = off)`,
        [],
        database.url,
      );
    await claimAndSettle();
    await readsAndRenewal();
    // Copies of that chat's rows, as many chats later would leave them.
    await sql(
      `WITH seeded AS (
         INSERT INTO "Conversation" (id, "userId", title, "createdAt", "updatedAt")
         SELECT gen_random_uuid(), $1::uuid, 'seeded ' || g, now(), now() FROM generate_series(1, ${SEEDED}) g
         RETURNING id)
       INSERT INTO "ChatRequest" (id, "userId", "idempotencyKey", fingerprint, status, "conversationId", "modelId",
                                  "usageDay", "reservedCredits", "leaseExpiresAt", "finishedAt")
       SELECT gen_random_uuid(), r."userId", 'seeded-' || s.id, r.fingerprint, 'completed', s.id, r."modelId",
              r."usageDay", r."reservedCredits", r."leaseExpiresAt", now()
         FROM seeded s CROSS JOIN (SELECT * FROM "ChatRequest" WHERE "userId" = $1::uuid LIMIT 1) r`,
      [userId],
      database.url,
    );
    await sql(
      `INSERT INTO "LedgerEntry" (id, "userId", kind, status, "chatRequestId", "modelId", "conversationId",
                                  "inputTokens", "outputTokens", credits, "createdAt")
       SELECT gen_random_uuid(), l."userId", l.kind, l.status, r.id, l."modelId", r."conversationId",
              l."inputTokens", l."outputTokens", l.credits, now()
         FROM "ChatRequest" r
         CROSS JOIN (SELECT * FROM "LedgerEntry" WHERE "userId" = $1::uuid LIMIT 1) l
        WHERE r."idempotencyKey" LIKE 'seeded-%'`,
      [userId],
      database.url,
    );
    await sql(
      `INSERT INTO "Message" (id, "conversationId", "chatRequestId", role, content, "createdAt")
       SELECT gen_random_uuid(), r."conversationId", r.id, m.role, m.content, now()
         FROM "ChatRequest" r
         CROSS JOIN (SELECT role, content FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId"
                      WHERE c."userId" = $1::uuid AND c.title NOT LIKE 'seeded %') m
        WHERE r."idempotencyKey" LIKE 'seeded-%'`,
      [userId],
      database.url,
    );
    // Earlier days' usage, as a user of many days leaves it.
    await sql(
      `INSERT INTO "DailyUsage" ("userId", day, used, reserved)
       SELECT $1::uuid, current_date - g, 1, 0 FROM generate_series(1, ${SEEDED}) g`,
      [userId],
      database.url,
    );
  });
  afterAll(async () => {
    await client?.end();
    await t.close();
    await fake.close();
    await database.drop();
  });

  /** Runs the statement on the instrumented connection as the service does; answers its rows and the plans it printed. */
  async function explained(
    statement: { name?: string; text: string },
    values: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; plans: string }> {
    plans.length = 0;
    const { rows } = await client.query({ ...statement, values });
    // Notices arrive before the statement's completion, but let any straggler in.
    await new Promise((done) => setImmediate(done));
    return { rows, plans: plans.join('\n') };
  }

  function claim(overrides: Record<string, unknown>): Record<string, unknown> {
    return {
      id: randomUUID(),
      userId,
      idempotencyKey: randomUUID(),
      fingerprint: 'plans',
      conversationId: randomUUID(),
      newConversation: true,
      title: 'plans',
      modelId: 'openai/gpt-4o-mini',
      skillId: null,
      skillVersionId: null,
      usageDay: new Date().toISOString().slice(0, 10),
      reservedCredits: 1,
      leaseMs: 60_000,
      organizationId: null,
      ...overrides,
    };
  }

  /** Any existing request: a key to find taken, a run to read and renew. */
  async function anExistingRun(): Promise<{ id: string; key: string }> {
    const [run] = await sql<{ id: string; key: string }>(
      `SELECT id::text, "idempotencyKey" AS key FROM "ChatRequest" WHERE "userId" = $1::uuid ORDER BY "createdAt" DESC LIMIT 1`,
      [userId],
      database.url,
    );
    return run;
  }

  /** A batch of three claims (new, a taken key, one the quota refuses), then the new one settled. */
  async function claimAndSettle() {
    const existing = await anExistingRun();
    const fresh = claim({});
    const claimed = await explained(CHAT_RUN_STATEMENTS.claimMany, [
      JSON.stringify([
        fresh,
        claim({ idempotencyKey: existing.key }),
        claim({ reservedCredits: 1_000_000_000 }),
      ]),
    ]);
    const settled = await explained(CHAT_RUN_STATEMENTS.settleMany, [
      JSON.stringify([
        {
          id: fresh.id,
          status: 'completed',
          responseBody: 'answer',
          errorCode: null,
          finishedAt: new Date().toISOString(),
          billed: true,
          skillId: null,
          skillVersionId: null,
          modelId: fresh.modelId,
          inputTokens: 1,
          outputTokens: 1,
          credits: 1,
          ledgerId: randomUUID(),
          anchored: false,
          parentId: null,
          messages: [
            { id: randomUUID(), role: 'user', content: 'question' },
            { id: randomUUID(), role: 'assistant', content: 'answer' },
          ],
        },
      ]),
    ]);
    return { claimed, settled };
  }

  /** The reads by key and by id and a lease renewal of an existing run. */
  async function readsAndRenewal() {
    const run = await anExistingRun();
    return [
      await explained(CHAT_RUN_STATEMENTS.findByKey, [userId, run.key]),
      await explained(CHAT_RUN_STATEMENTS.findById, [run.id]),
      await explained(CHAT_RUN_STATEMENTS.renewLeases, [[run.id], 60_000]),
    ];
  }

  it('claims (new, taken, refused by the quota) and settles by index, functions included', async () => {
    const { claimed, settled } = await claimAndSettle();
    const byPosition = [...claimed.rows].sort(
      (a, b) => Number(a.n) - Number(b.n),
    );
    expect(byPosition.map((row) => row.outcome)).toEqual([
      'claimed',
      'taken',
      'quota_exceeded',
    ]);
    // The instrumentation is on: the claim's own plan and its functions' statements were printed.
    expect(claimed.plans).toContain('chat_claim_many');
    expect(claimed.plans).toContain('"DailyUsage"');
    expect(claimed.plans.match(GROWING) ?? []).toEqual([]);
    expect(settled.rows).toEqual([{ n: 1 }]);
    expect(settled.plans).toContain('"LedgerEntry"');
    expect(settled.plans.match(GROWING) ?? []).toEqual([]);
  });

  it('reads a run by key and by id, and renews leases, by index', async () => {
    const reads = await readsAndRenewal();
    expect(reads[0].rows).toHaveLength(1);
    expect(reads[1].rows).toHaveLength(1);
    for (const read of reads) {
      expect(read.plans).toContain('Index');
      expect(read.plans.match(GROWING) ?? []).toEqual([]);
    }
  });
});
