import { randomUUID } from 'node:crypto';
import { chat, listen } from './support/chat-client';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { eventually } from './support/eventually';
import { bootTestApp, TestApp } from './support/test-app';

const echo = (
  content: string,
  idempotencyKey: string = randomUUID(),
  extra: Record<string, unknown> = {},
) => ({
  model: 'local/echo',
  idempotencyKey,
  messages: [{ role: 'user', content }],
  ...extra,
});
const openai = (
  content: string,
  idempotencyKey: string = randomUUID(),
  extra: Record<string, unknown> = {},
) => ({ ...echo(content, idempotencyKey, extra), model: 'openai/gpt-4o-mini' });

async function counts(userId: string) {
  const [row] = await sql<{
    requests: number;
    ledger: number;
    used: number;
    reserved: number;
  }>(
    `SELECT (SELECT count(*)::int FROM "ChatRequest" WHERE "userId" = $1) AS requests,
            (SELECT count(*)::int FROM "LedgerEntry" WHERE "userId" = $1) AS ledger,
            COALESCE((SELECT sum(used)::int FROM "DailyUsage" WHERE "userId" = $1), 0) AS used,
            COALESCE((SELECT sum(reserved)::int FROM "DailyUsage" WHERE "userId" = $1), 0) AS reserved`,
    [userId],
  );
  return row;
}

describe('POST /v1/chat', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let base: string;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    t = await bootTestApp({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
      ECHO_DELAY_MS: '2',
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Hello', ' world'] };
    fake.requests.length = 0;
  });

  it('streams the echo answer, creates the conversation and bills it once in the ledger', async () => {
    const user = await registerUser(t.http);
    const res = await chat(base, user.cookie, echo('one two three')).response;
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache, no-transform');
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.body).toBe('Echo: one two three');
    expect(res.complete).toBe(true);
    const conversationId = res.headers['x-conversation-id'] as string;
    const conversation = await t.http
      .get(`/v1/conversations/${conversationId}`)
      .set('Cookie', user.cookie)
      .expect(200);
    expect(conversation.body.title).toBe('one two three');
    expect(
      conversation.body.messages.map((m: { role: string; content: string }) => [
        m.role,
        m.content,
      ]),
    ).toEqual([
      ['user', 'one two three'],
      ['assistant', 'Echo: one two three'],
    ]);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      used: 1,
      reserved: 0,
    });
    const usage = await t.http
      .get('/v1/billing/usage')
      .set('Cookie', user.cookie)
      .expect(200);
    expect(usage.body.data).toEqual([
      expect.objectContaining({
        kind: 'usage',
        status: 'completed',
        model: 'local/echo',
        requestedModelId: null,
        conversationId,
        inputTokens: 3,
        cachedInputTokens: 0,
        outputTokens: 4,
        credits: 1,
      }),
    ]);
  });

  it('sends each token to the client as the provider produces it', async () => {
    const user = await registerUser(t.http);
    let release!: () => void;
    fake.mode = {
      kind: 'ok',
      words: ['first', ' second', ' last'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    const call = chat(base, user.cookie, openai('stream please'));
    // The provider holds its last token back: the earlier ones must already have reached the client.
    const first = await call.firstChunk;
    expect(first.length).toBeGreaterThan(0);
    expect('first second'.startsWith(first)).toBe(true);
    release();
    const res = await call.response;
    expect(res.body).toBe('first second last');
    expect(res.complete).toBe(true);
    expect(res.chunks.length).toBeGreaterThan(1);
  });

  it('appends a turn to the caller’s conversation and sends the stored history to the model', async () => {
    const user = await registerUser(t.http);
    const first = await chat(base, user.cookie, echo('remember apples'))
      .response;
    const conversationId = first.headers['x-conversation-id'] as string;
    const second = await chat(
      base,
      user.cookie,
      openai('what did I say?', randomUUID(), { conversationId }),
    ).response;
    expect(second.status).toBe(200);
    expect(second.headers['x-conversation-id']).toBe(conversationId);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].messages).toEqual([
      { role: 'user', content: 'remember apples' },
      { role: 'assistant', content: 'Echo: remember apples' },
      { role: 'user', content: 'what did I say?' },
    ]);
    const conversation = await t.http
      .get(`/v1/conversations/${conversationId}`)
      .set('Cookie', user.cookie)
      .expect(200);
    expect(
      conversation.body.messages.map((m: { content: string }) => m.content),
    ).toEqual([
      'remember apples',
      'Echo: remember apples',
      'what did I say?',
      'Hello world',
    ]);
    const list = await t.http
      .get('/v1/conversations')
      .set('Cookie', user.cookie)
      .expect(200);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([
      conversationId,
    ]);
  });

  it('two turns settling at once in one conversation are stored one after the other, never interleaved', async () => {
    const user = await registerUser(t.http);
    const start = await chat(base, user.cookie, echo('start')).response;
    const conversationId = start.headers['x-conversation-id'] as string;
    const turn = (label: string) => ({
      ...openai('unused', randomUUID(), { conversationId }),
      messages: Array.from({ length: 20 }, (_, index) => ({
        role: 'user',
        content: `${label}${index}`,
      })),
    });
    // Both runs are held at the provider before their last word, so both are generating at once; released
    // together, they settle into the conversation at the same moment.
    let release = () => {};
    const held = new Promise<void>((done) => (release = done));
    fake.mode = { kind: 'ok', words: ['Hello', ' world'], holdLast: held };
    const calls = [
      chat(base, user.cookie, turn('A')),
      chat(base, user.cookie, turn('B')),
    ];
    await Promise.all(calls.map((call) => call.firstChunk));
    await eventually(() => fake.requests.length === 2, 20_000);
    release();
    const [a, b] = await Promise.all(calls.map((call) => call.response));
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body, b.body]).toEqual(['Hello world', 'Hello world']);
    const conversation = await t.http
      .get(`/v1/conversations/${conversationId}`)
      .set('Cookie', user.cookie)
      .expect(200);
    // A user message by its label (A or B), an answer as H: each turn's 20 messages, then its answer.
    const labels = conversation.body.messages
      .slice(2)
      .map((m: { role: string; content: string }) =>
        m.role === 'assistant' ? 'H' : m.content.slice(0, 1),
      );
    expect(labels).toHaveLength(42);
    const blocks = labels.join('').replace(/(.)\1*/g, '$1');
    expect(['AHBH', 'BHAH']).toContain(blocks);
  });

  it('answers 404 for another user’s or an unknown conversation, billing nothing and keeping the key', async () => {
    const owner = await registerUser(t.http);
    const intruder = await registerUser(t.http);
    const own = await chat(base, owner.cookie, echo('private')).response;
    const key = randomUUID();
    const problems = [];
    for (const conversationId of [
      own.headers['x-conversation-id'],
      randomUUID(),
      'not-a-uuid',
    ]) {
      const res = await t.http
        .post('/v1/chat')
        .set('Cookie', intruder.cookie)
        .send(openai('leak it', key, { conversationId }));
      expect(res.status).toBe(404);
      problems.push({ ...res.body, requestId: undefined });
    }
    expect(problems[1]).toEqual(problems[0]);
    expect(problems[2]).toEqual(problems[0]);
    expect(fake.requests).toHaveLength(0);
    expect(await counts(intruder.id)).toEqual({
      requests: 0,
      ledger: 0,
      used: 0,
      reserved: 0,
    });
    // The key was not consumed by the refused requests.
    const fresh = await chat(base, intruder.cookie, openai('leak it', key))
      .response;
    expect(fresh.status).toBe(200);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses bad requests with a problem naming the field, storing nothing and keeping the key', async () => {
    const user = await registerUser(t.http);
    const key = randomUUID();
    const cases: [Record<string, unknown>, number, string, string?][] = [
      [
        { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] },
        400,
        'validation_failed',
        'idempotencyKey',
      ],
      [echo('hi', ''), 400, 'validation_failed', 'idempotencyKey'],
      [echo('hi', 'k'.repeat(256)), 400, 'validation_failed', 'idempotencyKey'],
      [echo('hi', 'tab\tkey'), 400, 'validation_failed', 'idempotencyKey'],
      [echo('hi', 'ключ'), 400, 'validation_failed', 'idempotencyKey'],
      [echo('hi', '   '), 400, 'validation_failed', 'idempotencyKey'],
      [
        { ...echo('hi', key), messages: [] },
        400,
        'validation_failed',
        'messages',
      ],
      [
        {
          ...echo('hi', key),
          messages: Array.from({ length: 101 }, () => ({
            role: 'user',
            content: 'x',
          })),
        },
        400,
        'validation_failed',
        'messages',
      ],
      [
        { ...echo('hi', key), messages: [{ role: 'robot', content: 'x' }] },
        400,
        'validation_failed',
        'messages.0.role',
      ],
      [
        { ...echo('hi', key), messages: [{ role: 'user', content: '' }] },
        400,
        'validation_failed',
        'messages.0.content',
      ],
      [
        { ...echo('hi', key), messages: [{ role: 'user' }] },
        400,
        'validation_failed',
        'messages.0.content',
      ],
      [
        { ...echo('hi', key), messages: ['hi'] },
        400,
        'validation_failed',
        'messages.0',
      ],
      [
        { ...echo('hi', key), messages: [[]] },
        400,
        'validation_failed',
        'messages',
      ],
      [
        { ...echo('hi', key), messages: [[{ role: 'user', content: 'x' }]] },
        400,
        'validation_failed',
        'messages',
      ],
      [
        { ...echo('hi', key), messages: [null] },
        400,
        'validation_failed',
        'messages',
      ],
      [
        { ...echo('hi', key), temperature: 2 },
        400,
        'validation_failed',
        'temperature',
      ],
      [
        { ...echo('hi', key), conversationId: 42 },
        400,
        'validation_failed',
        'conversationId',
      ],
      [
        { ...echo('hi', key), conversationId: '' },
        400,
        'validation_failed',
        'conversationId',
      ],
      [
        { ...echo('hi', key), constructor: { a: 1 } },
        400,
        'validation_failed',
        'constructor',
      ],
      [
        {
          ...echo('hi', key),
          messages: [{ role: 'user', content: 'x', constructor: {} }],
        },
        400,
        'validation_failed',
        'messages.0.constructor',
      ],
      [
        JSON.parse(
          `{"model":"local/echo","idempotencyKey":"${key}","messages":[{"role":"user","content":"x"}],"__proto__":{"admin":true}}`,
        ),
        400,
        'validation_failed',
        '__proto__',
      ],
      [
        { ...echo('hi', key), model: 'nobody/nothing' },
        400,
        'unknown_model',
        'model',
      ],
      [
        { ...echo('hi', key), model: 'anthropic/claude-haiku-4-5' },
        403,
        'model_not_allowed',
      ],
      [
        {
          ...echo('hi', key),
          messages: [
            { role: 'user', content: 'x'.repeat(60_000) },
            { role: 'user', content: 'y'.repeat(60_000) },
          ],
        },
        413,
        'messages_too_large',
      ],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await t.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send(body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({
        body,
        status,
        code,
      });
      expect(res.headers['content-type']).toContain('application/problem+json');
      if (field)
        expect(
          res.body.errors.map((error: { field: string }) => error.field),
        ).toContain(field);
    }
    expect(await counts(user.id)).toEqual({
      requests: 0,
      ledger: 0,
      used: 0,
      reserved: 0,
    });
    expect(fake.requests).toHaveLength(0);
    const ok = await chat(base, user.cookie, echo('hi', key)).response;
    expect(ok.status).toBe(200);
  });

  it('answers 503 for a model whose provider has no credentials, billing nothing', async () => {
    const user = await registerUser(t.http);
    await sql(`UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`, [user.id]);
    const res = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({ ...echo('hi'), model: 'anthropic/claude-haiku-4-5' });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('provider_not_configured');
    expect(await counts(user.id)).toEqual({
      requests: 0,
      ledger: 0,
      used: 0,
      reserved: 0,
    });
  });

  it('replays a finished request, even with the quota exhausted, without calling the model or billing again', async () => {
    const user = await registerUser(t.http);
    const key = randomUUID();
    const original = await chat(base, user.cookie, openai('replay me', key))
      .response;
    expect(original.status).toBe(200);
    const before = await counts(user.id);
    await sql(`UPDATE "DailyUsage" SET used = 50 WHERE "userId" = $1`, [
      user.id,
    ]);
    const exhausted = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send(openai('something new'));
    expect(exhausted.status).toBe(429);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const replay = await chat(base, user.cookie, openai('replay me', key))
        .response;
      expect(replay.status).toBe(200);
      expect(replay.body).toBe(original.body);
      expect(replay.headers['x-conversation-id']).toBe(
        original.headers['x-conversation-id'],
      );
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.complete).toBe(true);
    }
    expect(fake.requests).toHaveLength(1);
    expect(await counts(user.id)).toEqual({ ...before, used: 50 });
  });

  it('refuses the same key with a different request (422) and changes nothing', async () => {
    const user = await registerUser(t.http);
    const key = randomUUID();
    await chat(base, user.cookie, echo('first body', key)).response;
    const before = await counts(user.id);
    for (const body of [
      echo('second body', key),
      openai('first body', key),
      echo('first body', key, { conversationId: randomUUID() }),
    ]) {
      const res = await t.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send(body);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('idempotency_key_reused');
    }
    expect(await counts(user.id)).toEqual(before);
    // Keys belong to their user: another account may use the same one.
    const other = await registerUser(t.http);
    expect(
      (await chat(base, other.cookie, echo('second body', key)).response)
        .status,
    ).toBe(200);
  });

  it('50 concurrent requests with one key: one provider call, one ledger entry, identical bodies', async () => {
    const user = await registerUser(t.http);
    const key = randomUUID();
    let release!: () => void;
    fake.mode = {
      kind: 'ok',
      words: ['The', ' one', ' answer'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    const calls = Array.from({ length: 50 }, () =>
      chat(base, user.cookie, openai('once only', key)),
    );
    const first = await Promise.race(calls.map((call) => call.firstChunk));
    expect(first.length).toBeGreaterThan(0);
    setTimeout(() => release(), 300);
    const responses = await Promise.all(calls.map((call) => call.response));
    expect(responses.map((res) => res.status)).toEqual(Array(50).fill(200));
    expect(new Set(responses.map((res) => res.body))).toEqual(
      new Set(['The one answer']),
    );
    expect(
      new Set(responses.map((res) => res.headers['x-conversation-id'])).size,
    ).toBe(1);
    expect(
      responses.filter(
        (res) => res.headers['idempotent-replayed'] === undefined,
      ),
    ).toHaveLength(1);
    expect(responses.every((res) => res.complete)).toBe(true);
    expect(fake.requests).toHaveLength(1);
    const state = await counts(user.id);
    expect(state).toEqual(
      expect.objectContaining({ requests: 1, ledger: 1, reserved: 0 }),
    );
  });

  it('a retry while the answer is streaming joins it from the first byte', async () => {
    const user = await registerUser(t.http);
    const key = randomUUID();
    let release!: () => void;
    fake.mode = {
      kind: 'ok',
      words: ['alpha', ' beta', ' gamma'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    const original = chat(base, user.cookie, openai('join me', key));
    await original.firstChunk;
    await new Promise((done) => setTimeout(done, 50));
    const retry = chat(base, user.cookie, openai('join me', key));
    // The retry gets what was already written before the provider sends the rest.
    expect('alpha beta'.startsWith(await retry.firstChunk)).toBe(true);
    release();
    const [a, b] = await Promise.all([original.response, retry.response]);
    expect(b.body).toBe(a.body);
    expect(b.body).toBe('alpha beta gamma');
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(fake.requests).toHaveLength(1);
  });

  it('quota race: with 1 credit left, 10 concurrent keys give one answer and nine 429s', async () => {
    const user = await registerUser(t.http);
    const today = new Date().toISOString().slice(0, 10);
    await sql(
      `INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, $2, 49, 0)`,
      [user.id, today],
    );
    const keys = Array.from({ length: 10 }, () => randomUUID());
    const responses = await Promise.all(
      keys.map((key) =>
        t.http
          .post('/v1/chat')
          .set('Cookie', user.cookie)
          .send(echo('race', key)),
      ),
    );
    const statuses = responses.map((res) => res.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(429)]);
    for (const res of responses.filter((r) => r.status === 429)) {
      expect(res.body.code).toBe('quota_exceeded');
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(86_400);
    }
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      used: 50,
      reserved: 0,
    });
    const quota = await t.http
      .get('/v1/billing/quota')
      .set('Cookie', user.cookie)
      .expect(200);
    expect(quota.body).toEqual(
      expect.objectContaining({
        limit: 50,
        used: 50,
        reserved: 0,
        remaining: 0,
      }),
    );
    // A refused key was not consumed: once credits are granted it runs.
    await sql(
      `INSERT INTO "CreditGrant" (id, "userId", credits, "firstDay", "lastDay", reason) VALUES (gen_random_uuid(), $1, 5, $2, $2, 'test')`,
      [user.id, today],
    );
    const refusedKey = keys[responses.findIndex((res) => res.status === 429)];
    expect(
      (await chat(base, user.cookie, echo('race', refusedKey)).response).status,
    ).toBe(200);
  });

  it('a provider failing before the first token: 502, reservation released, nothing billed, the retry replays the failure', async () => {
    const user = await registerUser(t.http);
    const key = randomUUID();
    fake.mode = { kind: 'fail-before' };
    const res = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send(openai('fail', key));
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('provider_error');
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(JSON.stringify(res.body)).not.toContain('upstream exploded');
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 0,
      used: 0,
      reserved: 0,
    });
    fake.mode = { kind: 'ok', words: ['fine'] };
    const retry = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send(openai('fail', key));
    expect(retry.status).toBe(502);
    expect(retry.body.code).toBe('provider_error');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    // The run's call and its PROVIDER_RETRIES (2) retries before the first token; the replay calls nothing.
    expect(fake.requests).toHaveLength(3);
  });

  it('a provider breaking after some tokens: abnormal end, only the delivered part billed and replayed', async () => {
    const user = await registerUser(t.http);
    const key = randomUUID();
    fake.mode = { kind: 'break-after', words: ['partial', ' answer'] };
    const res = await chat(base, user.cookie, openai('break', key)).response;
    expect(res.status).toBe(200);
    expect(res.body).toBe('partial answer');
    expect(res.complete).toBe(false);
    const usage = await t.http
      .get('/v1/billing/usage')
      .set('Cookie', user.cookie)
      .expect(200);
    expect(usage.body.data).toHaveLength(1);
    const entry = usage.body.data[0];
    expect(entry).toEqual(
      expect.objectContaining({
        status: 'partial',
        model: 'openai/gpt-4o-mini',
        outputTokens: 2,
      }),
    );
    // Billed for the estimated input and two delivered tokens, far below the reservation for 4096 tokens.
    expect(entry.credits).toBe(2);
    expect(await counts(user.id)).toEqual({
      requests: 1,
      ledger: 1,
      used: 2,
      reserved: 0,
    });
    const conversation = await t.http
      .get(`/v1/conversations/${String(res.headers['x-conversation-id'])}`)
      .set('Cookie', user.cookie)
      .expect(200);
    expect(
      conversation.body.messages.map((m: { content: string }) => m.content),
    ).toEqual(['break', 'partial answer']);
    const replay = await chat(base, user.cookie, openai('break', key)).response;
    expect(replay.body).toBe('partial answer');
    expect(replay.complete).toBe(false);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(fake.requests).toHaveLength(1);
  });

  it('a client leaving mid-stream does not stop the answer: it is finished, stored, billed and replayed', async () => {
    const user = await registerUser(t.http);
    const key = randomUUID();
    let release!: () => void;
    fake.mode = {
      kind: 'ok',
      words: ['kept', ' despite', ' abort'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    const call = chat(base, user.cookie, openai('leave early', key));
    await call.firstChunk;
    call.abort();
    await call.response.catch(() => undefined);
    release();
    await eventually(
      async () => (await counts(user.id)).ledger === 1,
      15_000,
      25,
    );
    const replay = await chat(base, user.cookie, openai('leave early', key))
      .response;
    expect(replay.status).toBe(200);
    expect(replay.body).toBe('kept despite abort');
    expect(replay.complete).toBe(true);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(fake.requests).toHaveLength(1);
    expect(await counts(user.id)).toEqual(
      expect.objectContaining({ requests: 1, ledger: 1, reserved: 0 }),
    );
  });

  it('lists the caller’s ledger newest first, page by page, and only theirs', async () => {
    const user = await registerUser(t.http);
    const other = await registerUser(t.http);
    for (const word of ['a', 'b', 'c'])
      await chat(base, user.cookie, echo(word)).response;
    await chat(base, other.cookie, echo('z')).response;
    const first = await t.http
      .get('/v1/billing/usage')
      .query({ limit: 2 })
      .set('Cookie', user.cookie)
      .expect(200);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await t.http
      .get('/v1/billing/usage')
      .query({ limit: 2, cursor: first.body.nextCursor })
      .set('Cookie', user.cookie)
      .expect(200);
    expect(second.body).toEqual({
      data: [expect.any(Object)],
      nextCursor: null,
    });
    const all = [...first.body.data, ...second.body.data];
    const conversations = await Promise.all(
      all.map((entry: { conversationId: string }) =>
        t.http
          .get(`/v1/conversations/${entry.conversationId}`)
          .set('Cookie', user.cookie)
          .expect(200),
      ),
    );
    expect(conversations.map((res) => res.body.title)).toEqual(['c', 'b', 'a']);
    await t.http.get('/v1/billing/usage').expect(401);
    expect(
      (
        await t.http
          .get('/v1/billing/usage')
          .query({ limit: 500 })
          .set('Cookie', user.cookie)
      ).status,
    ).toBe(400);
  });

  it('requires a session', async () => {
    const res = await t.http.post('/v1/chat').send(echo('anonymous'));
    expect(res.status).toBe(401);
  });
});
