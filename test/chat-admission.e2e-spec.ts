import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { Metrics } from '../src/infra/metrics/metrics';
import { PrometheusMetrics } from '../src/infra/metrics/prometheus-metrics';
import { chat, listen } from './support/chat-client';
import { registerUser } from './support/factories';
import { FakeModelServer } from './support/fake-model-servers';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { freePort } from './support/service-process';
import { eventually } from './support/eventually';
import { ChatAdmission } from '../src/chat/admission/chat-admission';

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

/** The value of one sample of the app's own Prometheus exposition (NaN when absent). */
async function sample(t: TestApp, line: string): Promise<number> {
  const { body } = await t.app
    .get<Metrics, PrometheusMetrics>(Metrics)
    .exposition();
  const found = body.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : Number.NaN;
}

/** Another session holds the user's quota row in an open transaction: that user's claim waits on it. */
async function lockQuotaRow(userId: string): Promise<Client> {
  const locker = new Client({
    connectionString: process.env.TEST_DATABASE_URL,
  });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(
    `SELECT 1 FROM "DailyUsage" WHERE "userId" = $1 FOR UPDATE`,
    [userId],
  );
  return locker;
}

/** Resolves once readiness says new runs are admitted again. */
/**
 * Sends the chat once admission admits again and answers its response. The state is read from readiness
 * first; on a loaded machine the loop can be busy again between that answer and the chat (the window is
 * the process's own, test runner included), so a refusal then is sent again, with the same key: a refused
 * chat stores nothing, as the tests check.
 */
async function servedOnceAdmitting(
  t: TestApp,
  send: () => Promise<{ status: number; text: string }>,
): Promise<{ status: number; text: string }> {
  await admittingAgain(t);
  let last = await send();
  await eventually(
    async () => {
      if (last.status === 503) last = await send();
      return last.status !== 503;
    },
    5_000,
    100,
  );
  return last;
}

function admittingAgain(t: TestApp): Promise<void> {
  return eventually(async () => {
    const ready = await t.http.get('/v1/health/ready');
    return ready.body.admission.state === 'admitting';
  }, 5_000);
}

/** Blocks this process (the app runs in it) for `ms`, as a long synchronous task would. */
function stallEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** An instance with more chats than it can carry refuses the excess at once, storing and billing nothing. */
describe('chat admission control', () => {
  let fake: FakeModelServer;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
  });
  afterAll(() => fake.close());
  /** An instance whose OpenAI models answer from the fake, with these settings besides. */
  const bootWithFakeModel = (env: Record<string, string>) =>
    bootTestApp({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
      ...env,
    });

  describe('open streams (CHAT_MAX_STREAMS=2)', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await bootWithFakeModel({
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
      t = await bootWithFakeModel({
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
      const locker = await lockQuotaRow(blocked.id);
      try {
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
      t = await bootWithFakeModel({
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
      const locker = await lockQuotaRow(blocked.id);
      try {
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

  describe('measured headroom: memory (CHAT_ADMISSION_MAX_MEMORY_PERCENT=1, always short)', () => {
    let app: TestApp | undefined;
    beforeAll(async () => {
      app = await bootWithFakeModel({
        CHAT_ADMISSION_MAX_MEMORY_PERCENT: '1',
        METRICS_PORT: String(await freePort()),
      });
    });
    afterAll(() => app?.close());

    it('refuses new runs before the framework sees them, says why in readiness and metrics, and serves everything else', async () => {
      const t = app!;
      fake.mode = { kind: 'ok', words: ['never'] };
      const user = await registerUser(t.http);
      const key = randomUUID();
      const refused = await t.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .set('Origin', 'http://localhost:3000')
        .set('x-request-id', 'admission-test-1')
        .send(body(key));
      expect(refused.status).toBe(503);
      expect(refused.headers['content-type']).toMatch(
        /^application\/problem\+json/,
      );
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers['x-request-id']).toBe('admission-test-1');
      // A browser on an allowed origin can read it; the security headers are there as on every answer.
      expect(refused.headers['access-control-allow-origin']).toBe(
        'http://localhost:3000',
      );
      expect(refused.headers['access-control-expose-headers']).toMatch(
        /Retry-After/,
      );
      expect(refused.headers['x-content-type-options']).toBe('nosniff');
      expect(refused.body).toMatchObject({
        status: 503,
        code: 'overloaded',
        requestId: 'admission-test-1',
      });
      expect(refused.body.detail).toMatch(/short of memory/);
      // Not through Express: no access-log line, no provider call, nothing stored.
      expect(t.logs.some((line) => line.requestId === 'admission-test-1')).toBe(
        false,
      );
      expect(await storedKeys(user.id)).not.toContain(key);
      // An edit and a Skill run are refused the same way; other routes are served.
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
        .send({ model: 'local/echo', input: 'x', idempotencyKey: key });
      expect(skillRun.status).toBe(503);
      await t.http
        .get('/v1/billing/quota')
        .set('Cookie', user.cookie)
        .expect(200);

      const ready = await t.http.get('/v1/health/ready').expect(200);
      expect(ready.body.admission).toMatchObject({
        state: 'refusing',
        reason: 'memory',
        openStreams: 0,
        startingRuns: 0,
      });
      expect(ready.body.admission.memoryPercent).toBeGreaterThanOrEqual(1);
      expect(await sample(t, 'chat_admission_admitting')).toBe(0);
      expect(await sample(t, 'chat_admission_refusing{reason="memory"}')).toBe(
        1,
      );
      expect(
        await sample(t, 'chat_admission_refusing{reason="event_loop"}'),
      ).toBe(0);
      expect(
        await sample(t, 'chat_admission_refusals_total{reason="memory"}'),
      ).toBe(2);

      // The refusals are summed up in one warning when the period ends (here: at shutdown).
      app = undefined;
      await t.close();
      const summary = t.logs.filter(
        (line) => line.msg === 'new runs refused for load (503 overloaded)',
      );
      expect(summary).toHaveLength(1);
      expect(summary[0]).toMatchObject({ refused: { memory: 2 } });
    });
  });

  describe('measured headroom: the event loop (CHAT_ADMISSION_MAX_EVENT_LOOP_DELAY_MS=100)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await bootWithFakeModel({
        CHAT_ADMISSION_MAX_EVENT_LOOP_DELAY_MS: '100',
      });
    });
    afterAll(() => t.close());

    it('refuses while the loop was stalled within the last second, and admits again once it keeps up', async () => {
      fake.mode = { kind: 'ok', words: ['back'] };
      const user = await registerUser(t.http);
      await new Promise((done) => setTimeout(done, 1_100));
      stallEventLoop(300);
      const key = randomUUID();
      const refused = await t.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send(body(key));
      expect(refused.status).toBe(503);
      expect(refused.body.detail).toMatch(/event loop is behind/);
      expect(await storedKeys(user.id)).not.toContain(key);
      // The stall leaves the one-second window; the same key is then served.
      const served = await servedOnceAdmitting(t, () =>
        t.http.post('/v1/chat').set('Cookie', user.cookie).send(body(key)),
      );
      expect(served.status).toBe(200);
      expect(served.text).toBe('back');
    });
  });

  describe('measured headroom: a saturated event loop (CHAT_ADMISSION_MAX_EVENT_LOOP_UTILIZATION_PERCENT=60)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await bootWithFakeModel({
        CHAT_ADMISSION_MAX_EVENT_LOOP_UTILIZATION_PERCENT: '60',
      });
    });
    afterAll(() => t.close());

    it('refuses while the loop was busy most of the last half second, without any long stall, and admits once it idles', async () => {
      fake.mode = { kind: 'ok', words: ['idle'] };
      const user = await registerUser(t.http);
      await new Promise((done) => setTimeout(done, 600));
      // Busy 30 ms at a time with a turn of the loop in between: no stall, but no headroom either.
      for (let turn = 0; turn < 25; turn += 1) {
        stallEventLoop(30);
        await new Promise((done) => setImmediate(done));
      }
      const key = randomUUID();
      const refused = await t.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send(body(key));
      expect(refused.status).toBe(503);
      expect(refused.body.detail).toMatch(/event loop is behind/);
      const served = await servedOnceAdmitting(t, () =>
        t.http.post('/v1/chat').set('Cookie', user.cookie).send(body(key)),
      );
      expect(served.status).toBe(200);
      expect(served.text).toBe('idle');
    });
  });

  describe('measured headroom: the database (one claim slot, CHAT_ADMISSION_MAX_DB_WAIT_MS=100)', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await bootWithFakeModel({
        DATABASE_POOL_SIZE: '3',
        CHAT_ADMISSION_MAX_DB_WAIT_MS: '100',
      });
      base = await listen(t);
    });
    afterAll(() => t.close());

    it('refuses new runs while a claim has waited too long for the database, and admits again once it moves', async () => {
      fake.mode = { kind: 'ok', words: ['ok'] };
      const blocked = await registerUser(t.http);
      const other = await registerUser(t.http);
      const third = await registerUser(t.http);
      for (const user of [blocked, other, third])
        expect(
          (await chat(base, user.cookie, body(randomUUID())).response).status,
        ).toBe(200);
      const locker = await lockQuotaRow(blocked.id);
      try {
        // The blocked claim holds the only claim slot; the other user's claim waits behind it.
        const holding = chat(base, blocked.cookie, body(randomUUID()));
        await eventually(
          () => t.app.get(ChatAdmission).state().startingRuns === 1,
          5_000,
        );
        const waiting = chat(base, other.cookie, body(randomUUID()));
        await eventually(
          () => t.app.get(ChatAdmission).state().databaseWaitMs > 150,
          5_000,
        );
        const key = randomUUID();
        const refused = await t.http
          .post('/v1/chat')
          .set('Cookie', third.cookie)
          .send(body(key));
        expect(refused.status).toBe(503);
        expect(refused.body.detail).toMatch(/waiting on its database/);
        const ready = await t.http.get('/v1/health/ready').expect(200);
        expect(ready.body.admission).toMatchObject({
          state: 'refusing',
          reason: 'database',
          startingRuns: 2,
        });
        await locker.query('COMMIT');
        expect((await holding.response).status).toBe(200);
        expect((await waiting.response).status).toBe(200);
        expect(t.app.get(ChatAdmission).state().refusing).toBeNull();
        expect(
          (await chat(base, third.cookie, body(key)).response).status,
        ).toBe(200);
        expect(await storedKeys(third.id)).toContain(key);
      } finally {
        await locker.end();
      }
    });
  });
});
