import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { chat, listen } from './support/chat-client';
import { registerUser } from './support/factories';
import { FakeModelServer } from './support/fake-model-servers';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

const body = (idempotencyKey: string, content = 'hi') => ({
  model: 'openai/gpt-4o-mini',
  idempotencyKey,
  messages: [{ role: 'user', content }],
});

async function storedKeys(userId: string): Promise<string[]> {
  return (
    await sql<{ key: string }>(
      `SELECT "idempotencyKey" AS key FROM "ChatRequest" WHERE "userId" = $1`,
      [userId],
    )
  ).map((row) => row.key);
}

/** An instance with more chats than it can carry refuses the excess at once, storing and billing nothing. */
describe('chat admission control', () => {
  let fake: FakeModelServer;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
  });
  afterAll(() => fake.close());

  describe('open streams (CHAT_MAX_STREAMS=2)', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await bootTestApp({
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseUrl,
        CHAT_MAX_STREAMS: '2',
      });
      base = await listen(t);
    });
    afterAll(() => t.close());

    it('refuses a third chat with 503 overloaded and Retry-After while two stream; the same key works once they end', async () => {
      const user = await registerUser(t.http);
      let release!: () => void;
      fake.mode = {
        kind: 'ok',
        words: ['held', ' back'],
        holdLast: new Promise<void>((done) => (release = done)),
      };
      const running = [
        chat(base, user.cookie, body(randomUUID())),
        chat(base, user.cookie, body(randomUUID())),
      ];
      await Promise.all(running.map((call) => call.firstChunk));
      const key = randomUUID();
      const refused = await t.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send(body(key));
      expect(refused.status).toBe(503);
      expect(refused.headers['content-type']).toMatch(
        /^application\/problem\+json/,
      );
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body).toMatchObject({ status: 503, code: 'overloaded' });
      // Skill runs count against the same limit.
      const skill = (
        await t.http
          .post('/v1/skills')
          .set('Cookie', user.cookie)
          .send({ name: 'S', instruction: 'Do.' })
          .expect(201)
      ).body;
      const skillRun = await t.http
        .post(`/v1/skills/${skill.id}/run`)
        .set('Cookie', user.cookie)
        .send({
          model: 'local/echo',
          input: 'x',
          idempotencyKey: randomUUID(),
        });
      expect(skillRun.body.code).toBe('overloaded');
      expect(await storedKeys(user.id)).not.toContain(key);
      release();
      expect(
        (await Promise.all(running.map((call) => call.response))).map(
          (res) => res.status,
        ),
      ).toEqual([200, 200]);
      fake.mode = { kind: 'ok', words: ['now', ' served'] };
      const served = await chat(base, user.cookie, body(key)).response;
      expect(served.status).toBe(200);
      expect(served.body).toBe('now served');
    });
  });

  describe('start deadline (one start slot: DATABASE_POOL_SIZE=3, CHAT_START_TIMEOUT_MS=300)', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await bootTestApp({
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseUrl,
        DATABASE_POOL_SIZE: '3',
        CHAT_START_TIMEOUT_MS: '300',
      });
      base = await listen(t);
    });
    afterAll(() => t.close());

    it('refuses a chat that cannot start within the deadline, then serves it once the slot is free', async () => {
      fake.mode = { kind: 'ok', words: ['ok'] };
      const blocked = await registerUser(t.http);
      const other = await registerUser(t.http);
      expect(
        (await chat(base, blocked.cookie, body(randomUUID())).response).status,
      ).toBe(200);
      expect(
        (await chat(base, other.cookie, body(randomUUID())).response).status,
      ).toBe(200);
      // Another session holds the blocked user's quota row: that user's claim waits inside the only slot.
      const locker = new Client({
        connectionString: process.env.TEST_DATABASE_URL,
      });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(
          `SELECT 1 FROM "DailyUsage" WHERE "userId" = $1 FOR UPDATE`,
          [blocked.id],
        );
        const waiting = chat(base, blocked.cookie, body(randomUUID()));
        await new Promise((done) => setTimeout(done, 100));
        const key = randomUUID();
        const refused = await t.http
          .post('/v1/chat')
          .set('Cookie', other.cookie)
          .send(body(key));
        expect(refused.status).toBe(503);
        expect(refused.body.code).toBe('overloaded');
        expect(refused.headers['retry-after']).toBe('1');
        expect(await storedKeys(other.id)).not.toContain(key);
        await locker.query('COMMIT');
        expect((await waiting.response).status).toBe(200);
        expect(
          (await chat(base, other.cookie, body(key)).response).status,
        ).toBe(200);
      } finally {
        await locker.end();
      }
    });
  });

  describe('runs starting (CHAT_MAX_STARTING=1)', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await bootTestApp({
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseUrl,
        CHAT_MAX_STARTING: '1',
      });
      base = await listen(t);
    });
    afterAll(() => t.close());

    it('refuses a chat at once, before reading its body, while another is still starting', async () => {
      fake.mode = { kind: 'ok', words: ['ok'] };
      const blocked = await registerUser(t.http);
      const other = await registerUser(t.http);
      expect(
        (await chat(base, blocked.cookie, body(randomUUID())).response).status,
      ).toBe(200);
      const locker = new Client({
        connectionString: process.env.TEST_DATABASE_URL,
      });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(
          `SELECT 1 FROM "DailyUsage" WHERE "userId" = $1 FOR UPDATE`,
          [blocked.id],
        );
        const waiting = chat(base, blocked.cookie, body(randomUUID()));
        await new Promise((done) => setTimeout(done, 100));
        // Even a body that is not JSON is refused for load first: it is never read.
        const refused = await t.http
          .post('/v1/chat')
          .set('Cookie', other.cookie)
          .set('Content-Type', 'application/json')
          .send('{not json');
        expect(refused.status).toBe(503);
        expect(refused.body).toMatchObject({ code: 'overloaded' });
        expect(refused.headers['retry-after']).toBe('1');
        // Other routes are not affected.
        expect(
          (await t.http.get('/v1/billing/quota').set('Cookie', other.cookie))
            .status,
        ).toBe(200);
        await locker.query('COMMIT');
        expect((await waiting.response).status).toBe(200);
        expect(
          (await chat(base, other.cookie, body(randomUUID())).response).status,
        ).toBe(200);
      } finally {
        await locker.end();
      }
    });
  });
});
