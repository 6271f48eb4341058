import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { fingerprintOf } from '../src/chat/fingerprint';
import { chat, listen } from './support/chat-client';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

const openai = (content: string, idempotencyKey: string) => ({ model: 'openai/gpt-4o-mini', idempotencyKey, messages: [{ role: 'user', content }] });

async function ledgerCount(userId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "LedgerEntry" WHERE "userId" = $1`, [userId]);
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

  (process.env.TEST_REDIS_URL ? describe : describe.skip)('two instances sharing the database and Redis', () => {
    let a: TestApp;
    let b: TestApp;
    let baseA: string;
    let baseB: string;
    beforeAll(async () => {
      const shared = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.baseUrl, REDIS_KEY_PREFIX: `test:${randomUUID()}:` };
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
      fake.mode = { kind: 'ok', words: ['shared', ' by', ' all'], holdLast: new Promise<void>((done) => (release = done)) };
      const calls = Array.from({ length: 50 }, (_, index) => chat(index % 2 === 0 ? baseA : baseB, user.cookie, openai('two instances', key)));
      await Promise.race(calls.map((call) => call.firstChunk));
      setTimeout(() => release(), 300);
      const responses = await Promise.all(calls.map((call) => call.response));
      expect(responses.map((res) => res.status)).toEqual(Array(50).fill(200));
      expect(new Set(responses.map((res) => res.body))).toEqual(new Set(['shared by all']));
      expect(new Set(responses.map((res) => res.headers['x-conversation-id'])).size).toBe(1);
      expect(responses.every((res) => res.complete)).toBe(true);
      expect(fake.requests).toHaveLength(1);
      expect(await ledgerCount(user.id)).toBe(1);
    });

    it('a retry reaching the other instance joins the live answer from its first byte', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      let release!: () => void;
      fake.mode = { kind: 'ok', words: ['from', ' the', ' other', ' side'], holdLast: new Promise<void>((done) => (release = done)) };
      const original = chat(baseA, user.cookie, openai('cross', key));
      await original.firstChunk;
      await new Promise((done) => setTimeout(done, 100));
      const retry = chat(baseB, user.cookie, openai('cross', key));
      // Instance B hears the text instance A has produced so far while the provider still holds the rest.
      const joined = await retry.firstChunk;
      expect(joined.startsWith('from')).toBe(true);
      release();
      const [first, second] = await Promise.all([original.response, retry.response]);
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
      t = await bootTestApp({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.baseUrl, PROVIDER_TIMEOUT_MS: '300' });
      base = await listen(t);
    });
    afterAll(() => t.close());

    it('no first token in time: 502 provider_timeout, reservation released, nothing billed', async () => {
      const user = await registerUser(t.http);
      fake.mode = { kind: 'ok', words: ['never'], holdLast: new Promise<void>(() => undefined) };
      const res = await t.http.post('/v1/chat').set('Cookie', user.cookie).send(openai('slow', randomUUID()));
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('provider_timeout');
      const quota = await t.http.get('/v1/billing/quota').set('Cookie', user.cookie).expect(200);
      expect(quota.body).toEqual(expect.objectContaining({ used: 0, reserved: 0, remaining: 50 }));
      expect(await ledgerCount(user.id)).toBe(0);
    });

    it('silence after some tokens: the stream ends abnormally and only the delivered part is billed', async () => {
      const user = await registerUser(t.http);
      fake.mode = { kind: 'ok', words: ['started', ' then', ' stalled'], holdLast: new Promise<void>(() => undefined) };
      const res = await chat(base, user.cookie, openai('stall', randomUUID())).response;
      expect(res.status).toBe(200);
      expect(res.body).toBe('started then');
      expect(res.complete).toBe(false);
      const [entry] = await sql<{ status: string; outputTokens: number }>(`SELECT status, "outputTokens" FROM "LedgerEntry" WHERE "userId" = $1`, [user.id]);
      expect(entry).toEqual({ status: 'partial', outputTokens: 2 });
    });
  });

  describe('runs left behind by a crashed instance', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await bootTestApp({ CHAT_LEASE_MS: '500' });
      base = await listen(t);
    });
    afterAll(() => t.close());

    /** What a dead instance leaves: a streaming claim with an expired lease and its reservation. */
    async function abandonedRun(userId: string, key: string, content: string): Promise<string> {
      const conversationId = randomUUID();
      const today = new Date().toISOString().slice(0, 10);
      const fingerprint = fingerprintOf({ kind: 'chat', model: 'local/echo', conversationId: null, messages: [{ role: 'user', content }] });
      await sql(`INSERT INTO "Conversation" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'abandoned', now())`, [conversationId, userId]);
      await sql(
        `INSERT INTO "ChatRequest" (id, "userId", "idempotencyKey", fingerprint, status, "conversationId", "modelId", "usageDay", "reservedCredits", "leaseExpiresAt")
         VALUES (gen_random_uuid(), $1, $2, $3, 'streaming', $4, 'local/echo', $5, 1, now() + interval '1 second')`,
        [userId, key, fingerprint, conversationId, today],
      );
      await sql(`INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, $2, 0, 1)`, [userId, today]);
      return conversationId;
    }

    it('a retry waiting on it, and later retries, get the failure once the sweeper releases the reservation', async () => {
      const user = await registerUser(t.http);
      const key = randomUUID();
      const conversationId = await abandonedRun(user.id, key, 'orphan');
      const body = { model: 'local/echo', idempotencyKey: key, messages: [{ role: 'user', content: 'orphan' }] };
      // Joins the run it finds streaming, then learns from the database that it was failed.
      const waiting = await chat(base, user.cookie, body).response;
      expect(waiting.status).toBe(502);
      expect(waiting.headers['x-conversation-id']).toBeUndefined();
      expect(JSON.parse(waiting.body)).toEqual(expect.objectContaining({ code: 'generation_interrupted' }));
      const [request] = await sql<{ id: string; status: string; errorCode: string }>(`SELECT id, status, "errorCode" FROM "ChatRequest" WHERE "userId" = $1`, [user.id]);
      expect(request).toEqual({ id: expect.any(String), status: 'failed', errorCode: 'generation_interrupted' });
      if (process.env.TEST_REDIS_URL) {
        // The waiting retry followed the run through Redis; answering its 502 released the subscription.
        const redis = new Redis(process.env.TEST_REDIS_URL);
        const channel = `${t.config.redis.keyPrefix}live:${request.id}`;
        expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, 0]);
        await redis.quit();
      }
      const quota = await t.http.get('/v1/billing/quota').set('Cookie', user.cookie).expect(200);
      expect(quota.body).toEqual(expect.objectContaining({ used: 0, reserved: 0 }));
      const later = await t.http.post('/v1/chat').set('Cookie', user.cookie).send(body);
      expect(later.status).toBe(502);
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(await ledgerCount(user.id)).toBe(0);
      expect(conversationId).toBeDefined();
    });

    it('keeps renewing the lease of a run that outlives it', async () => {
      const user = await registerUser(t.http);
      // 30 words at 30 ms each outlast the 500 ms lease several times over.
      const words = Array.from({ length: 30 }, (_, index) => `w${index}`).join(' ');
      const res = await chat(base, user.cookie, { model: 'local/echo', idempotencyKey: randomUUID(), messages: [{ role: 'user', content: words }] }).response;
      expect(res.status).toBe(200);
      expect(res.complete).toBe(true);
      expect(res.body).toBe(`Echo: ${words}`);
      expect(await ledgerCount(user.id)).toBe(1);
    });
  });
});
