import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import { ChatSweeperService } from '../src/chat/chat-sweeper.service';
import { LeaseKeeper } from '../src/chat/lease-keeper';
import { fingerprintOf } from '../src/chat/fingerprint';
import { chat, listen } from './support/chat-client';
import { runRedisUrl } from './support/test-redis';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { eventually } from './support/eventually';
import { bootTestApp, TestApp } from './support/test-app';

const openai = (content: string, idempotencyKey: string) => ({
  model: 'openai/gpt-4o-mini',
  idempotencyKey,
  messages: [{ role: 'user', content }],
});

async function ledgerCount(userId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM "LedgerEntry" WHERE "userId" = $1`,
    [userId],
  );
  return row.n;
}

describe('chat across instances, timeouts and crashes', () => {
  let fake: FakeModelServer;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
  });

  describe('two instances sharing the database and Redis', () => {
    let a: TestApp;
    let b: TestApp;
    let baseA: string;
    let baseB: string;
    beforeAll(async () => {
      const shared = {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseUrl,
        REDIS_KEY_PREFIX: `test:${randomUUID()}:`,
      };
      [a, b] = [await bootTestApp(shared), await bootTestApp(shared)];
      [baseA, baseB] = [await listen(a), await listen(b)];
    });
    afterAll(async () => {
      await a.close();
      await b.close();
    });

    it('50 concurrent requests with one key over both instances: one provider call, one ledger entry, identical bodies', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      let release!: () => void;
      fake.mode = {
        kind: 'ok',
        words: ['shared', ' by', ' all'],
        holdLast: new Promise<void>((done) => (release = done)),
      };
      const calls = Array.from({ length: 50 }, (_, index) =>
        chat(
          index % 2 === 0 ? baseA : baseB,
          user.cookie,
          openai('two instances', key),
        ),
      );
      await Promise.race(calls.map((call) => call.firstChunk));
      setTimeout(() => release(), 300);
      const responses = await Promise.all(calls.map((call) => call.response));
      expect(responses.map((res) => res.status)).toEqual(Array(50).fill(200));
      expect(new Set(responses.map((res) => res.body))).toEqual(
        new Set(['shared by all']),
      );
      expect(
        new Set(responses.map((res) => res.headers['x-conversation-id'])).size,
      ).toBe(1);
      expect(responses.every((res) => res.complete)).toBe(true);
      expect(fake.requests).toHaveLength(1);
      expect(await ledgerCount(user.id)).toBe(1);
    });

    it('a retry reaching the other instance joins the live answer from its first byte', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      let release!: () => void;
      fake.mode = {
        kind: 'ok',
        words: ['from', ' the', ' other', ' side'],
        holdLast: new Promise<void>((done) => (release = done)),
      };
      const original = chat(baseA, user.cookie, openai('cross', key));
      await original.firstChunk;
      await new Promise((done) => setTimeout(done, 100));
      const retry = chat(baseB, user.cookie, openai('cross', key));
      // Instance B hears the text instance A has produced so far while the provider still holds the rest.
      const joined = await retry.firstChunk;
      expect(joined.startsWith('from')).toBe(true);
      release();
      const [first, second] = await Promise.all([
        original.response,
        retry.response,
      ]);
      expect(second.body).toBe('from the other side');
      expect(second.body).toBe(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.complete).toBe(true);
      expect(fake.requests).toHaveLength(1);
    });
  });

  describe('provider timeouts', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await bootTestApp({
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseUrl,
        PROVIDER_TIMEOUT_MS: '300',
      });
      base = await listen(t);
    });
    afterAll(() => t.close());

    it('no first token in time: 502 provider_timeout, reservation released, nothing billed', async () => {
      const user = await registerUser(t.http);
      fake.mode = {
        kind: 'ok',
        words: ['never'],
        holdLast: new Promise<void>(() => undefined),
      };
      const res = await t.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send(openai('slow', randomUUID()));
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('provider_timeout');
      const quota = await t.http
        .get('/v1/billing/quota')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(quota.body).toEqual(
        expect.objectContaining({ used: 0, reserved: 0, remaining: 50 }),
      );
      expect(await ledgerCount(user.id)).toBe(0);
    });

    it('silence after some tokens: the stream ends abnormally and only the delivered part is billed', async () => {
      const user = await registerUser(t.http);
      fake.mode = {
        kind: 'ok',
        words: ['started', ' then', ' stalled'],
        holdLast: new Promise<void>(() => undefined),
      };
      const res = await chat(base, user.cookie, openai('stall', randomUUID()))
        .response;
      expect(res.status).toBe(200);
      expect(res.body).toBe('started then');
      expect(res.complete).toBe(false);
      const [entry] = await sql<{ status: string; outputTokens: number }>(
        `SELECT status, "outputTokens" FROM "LedgerEntry" WHERE "userId" = $1`,
        [user.id],
      );
      expect(entry).toEqual({ status: 'partial', outputTokens: 2 });
    });
  });

  describe('runs left behind by a crashed instance', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      // The shortest lease accepted; the echo model's 250 ms per word makes a run outlive it.
      t = await bootTestApp({ CHAT_LEASE_MS: '5000', ECHO_DELAY_MS: '250' });
      base = await listen(t);
    });
    afterAll(() => t.close());

    /** What a dead instance leaves: a streaming claim with an expired lease and its reservation. */
    async function abandonedRun(
      userId: string,
      key: string,
      content: string,
    ): Promise<string> {
      const conversationId = randomUUID();
      const today = new Date().toISOString().slice(0, 10);
      const fingerprint = fingerprintOf({
        kind: 'chat',
        model: 'local/echo',
        conversationId: null,
        messages: [{ role: 'user', content }],
      });
      await sql(
        `INSERT INTO "Conversation" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'abandoned', now())`,
        [conversationId, userId],
      );
      await sql(
        `INSERT INTO "ChatRequest" (id, "userId", "idempotencyKey", fingerprint, status, "conversationId", "modelId", "usageDay", "reservedCredits", "leaseExpiresAt")
         VALUES (gen_random_uuid(), $1, $2, $3, 'streaming', $4, 'local/echo', $5, 1, now() + interval '1 second')`,
        [userId, key, fingerprint, conversationId, today],
      );
      await sql(
        `INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, $2, 0, 1)`,
        [userId, today],
      );
      return conversationId;
    }

    it('a retry waiting on it, and later retries, get the failure once the sweeper releases the reservation', async () => {
      const user = await registerUser(t.http);
      const key = randomUUID();
      const conversationId = await abandonedRun(user.id, key, 'orphan');
      const body = {
        model: 'local/echo',
        idempotencyKey: key,
        messages: [{ role: 'user', content: 'orphan' }],
      };
      // Joins the run it finds streaming, then learns from the database that it was failed.
      const waiting = await chat(base, user.cookie, body).response;
      expect(waiting.status).toBe(502);
      expect(waiting.headers['x-conversation-id']).toBeUndefined();
      expect(JSON.parse(waiting.body)).toEqual(
        expect.objectContaining({ code: 'generation_interrupted' }),
      );
      const [request] = await sql<{
        id: string;
        status: string;
        errorCode: string;
      }>(
        `SELECT id, status, "errorCode" FROM "ChatRequest" WHERE "userId" = $1`,
        [user.id],
      );
      expect(request).toEqual({
        id: expect.any(String),
        status: 'failed',
        errorCode: 'generation_interrupted',
      });
      // The waiting retry followed the run through Redis; answering its 502 released the subscription.
      const redis = new Redis(runRedisUrl());
      const channel = `${t.config.redis.keyPrefix}live:${request.id}`;
      expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, 0]);
      await redis.quit();
      const quota = await t.http
        .get('/v1/billing/quota')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(quota.body).toEqual(
        expect.objectContaining({ used: 0, reserved: 0 }),
      );
      const later = await t.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send(body);
      expect(later.status).toBe(502);
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(await ledgerCount(user.id)).toBe(0);
      expect(conversationId).toBeDefined();
    });

    it('keeps renewing the lease of a run that outlives it', async () => {
      const user = await registerUser(t.http);
      // 30 words at 250 ms each outlast the 5 s lease: it must be renewed, and the sweeper (every 2.5 s) must not fail the run.
      const words = Array.from({ length: 30 }, (_, index) => `w${index}`).join(
        ' ',
      );
      const res = await chat(base, user.cookie, {
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: words }],
      }).response;
      expect(res.status).toBe(200);
      expect(res.complete).toBe(true);
      expect(res.body).toBe(`Echo: ${words}`);
      expect(await ledgerCount(user.id)).toBe(1);
    });
  });

  describe('leases of live runs (two instances, the shortest lease)', () => {
    let t: TestApp;
    let other: TestApp;
    let base: string;
    const env = { CHAT_LEASE_MS: '5000', ECHO_DELAY_MS: '250' };
    beforeAll(async () => {
      [t, other] = [await bootTestApp(env), await bootTestApp(env)];
      base = await listen(t);
    });
    afterAll(async () => {
      await t.close();
      await other.close();
    });

    const words = (count: number) =>
      Array.from({ length: count }, (_, index) => `w${index}`).join(' ');
    const echoBody = (content: string) => ({
      model: 'local/echo',
      idempotencyKey: randomUUID(),
      messages: [{ role: 'user', content }],
    });
    const runOf = async (userId: string) =>
      (
        await sql<{
          id: string;
          status: string;
          responseBody: string | null;
          leaseLeftMs: number;
        }>(
          `SELECT id::text, status::text, "responseBody", (extract(epoch FROM "leaseExpiresAt" - clock_timestamp()) * 1000)::int AS "leaseLeftMs" FROM "ChatRequest" WHERE "userId" = $1`,
          [userId],
        )
      )[0];

    it('renews a run that outlives its lease, so another instance never sweeps it', async () => {
      const user = await registerUser(t.http);
      const content = words(30); // 7.5 s of answer, half again the 5 s lease
      const call = chat(base, user.cookie, echoBody(content));
      await call.firstChunk;
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      // Other test files share the database: the sweep may fail their abandoned runs, never this one.
      const run = await runOf(user.id);
      expect(await other.app.get(ChatSweeperService).sweep()).not.toContain(
        run.id,
      );
      expect(await runOf(user.id)).toMatchObject({ status: run.status });
      expect((await runOf(user.id)).leaseLeftMs).toBeGreaterThan(2_000);
      const res = await call.response;
      expect({
        status: res.status,
        complete: res.complete,
        body: res.body,
      }).toEqual({ status: 200, complete: true, body: `Echo: ${content}` });
      expect(await ledgerCount(user.id)).toBe(1);
    }, 30_000);

    it('never lets an instance sweep a run it is still generating, whatever the lease says', async () => {
      // An instance of its own, so no other instance's sweeper takes the run whose lease is forced out.
      const solo = await bootTestApp(env);
      try {
        const user = await registerUser(solo.http);
        // 10 s of answer: the run must still be generating when the renewal below comes, even on a
        // loaded machine where the sweep and the checks before it take seconds.
        const call = chat(await listen(solo), user.cookie, echoBody(words(40)));
        await call.firstChunk;
        await sql(
          `UPDATE "ChatRequest" SET "leaseExpiresAt" = clock_timestamp() - interval '1 minute' WHERE "userId" = $1`,
          [user.id],
        );
        // Other test files share the database: the sweep may fail their abandoned runs, never this one.
        const run = await runOf(user.id);
        const swept = await solo.app.get(ChatSweeperService).sweep();
        expect(swept).not.toContain(run.id);
        expect((await runOf(user.id)).status).toBe(run.status);
        await eventually(async () => {
          await solo.app.get(LeaseKeeper).renew();
          return (await runOf(user.id)).leaseLeftMs > 4_000;
        }, 10_000);
        const res = await call.response;
        expect(res.complete).toBe(true);
        expect(await ledgerCount(user.id)).toBe(1);
      } finally {
        await solo.close();
      }
    }, 40_000);

    it('starts the lease when the claim commits, by the database clock, however long the claim waited on a lock', async () => {
      const user = await registerUser(t.http);
      const today = new Date().toISOString().slice(0, 10);
      await sql(
        `INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, $2, 0, 0)`,
        [user.id, today],
      );
      const locker = new Client({
        connectionString: process.env.TEST_DATABASE_URL,
      });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(
          `SELECT 1 FROM "DailyUsage" WHERE "userId" = $1 FOR UPDATE`,
          [user.id],
        );
        const call = chat(base, user.cookie, echoBody(words(3)));
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        await locker.query('COMMIT');
        await call.firstChunk;
        // Claimed after the 2.5 s wait: the lease counts from then (renewals only move it further).
        expect((await runOf(user.id)).leaseLeftMs).toBeGreaterThan(4_000);
        expect((await call.response).complete).toBe(true);
      } finally {
        await locker.end();
      }
    });

    it('keeps the text a swept run had delivered: the retry replays it with the failure, nothing billed', async () => {
      const user = await registerUser(t.http);
      const body = echoBody(words(12));
      const call = chat(base, user.cookie, body);
      await call.firstChunk;
      // What another instance's sweeper does when this one lost the database for longer than the lease
      // (forced again should a renewal of this instance come in between; either sweep of `other` may take it).
      await eventually(async () => {
        await sql(
          `UPDATE "ChatRequest" SET "leaseExpiresAt" = clock_timestamp() - interval '1 minute' WHERE "userId" = $1 AND status = 'streaming'`,
          [user.id],
        );
        await other.app.get(ChatSweeperService).sweep();
        return (await runOf(user.id)).status === 'failed';
      }, 10_000);
      const first = await call.response;
      expect(first.complete).toBe(false);
      expect(first.body.length).toBeGreaterThan(0);
      const stored = await runOf(user.id);
      expect(stored).toEqual(
        expect.objectContaining({ status: 'failed', responseBody: first.body }),
      );
      const retry = await chat(base, user.cookie, body).response;
      expect({
        status: retry.status,
        body: retry.body,
        complete: retry.complete,
        replayed: retry.headers['idempotent-replayed'],
      }).toEqual({
        status: 200,
        body: first.body,
        complete: false,
        replayed: 'true',
      });
      expect(await ledgerCount(user.id)).toBe(0);
      const quota = await t.http
        .get('/v1/billing/quota')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(quota.body).toEqual(
        expect.objectContaining({ used: 0, reserved: 0 }),
      );
    });
  });
});
