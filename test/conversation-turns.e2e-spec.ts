import { randomUUID } from 'node:crypto';
import { chat, listen, parseEvents, post } from './support/chat-client';
import { eventually } from './support/eventually';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { LeaseKeeper } from '../src/chat/lease-keeper';

const openai = (
  content: string,
  idempotencyKey: string = randomUUID(),
  extra: Record<string, unknown> = {},
) => ({
  model: 'openai/gpt-4o-mini',
  idempotencyKey,
  messages: [{ role: 'user', content }],
  ...extra,
});
const EVENTS = { Accept: 'text/event-stream' };

type Message = {
  id: string;
  parentId: string | null;
  role: string;
  content: string;
  alternatives: string[];
  usage: { inputTokens: number; outputTokens: number; credits: number } | null;
};

/** The fake's next answer holds its last word until `release` (the stop tests end it before). */
function holding(fake: FakeModelServer, words: string[]): () => void {
  let release!: () => void;
  fake.mode = {
    kind: 'ok',
    words,
    holdLast: new Promise<void>((done) => (release = done)),
  };
  return () => release();
}

async function ledgerOf(userId: string) {
  return sql<{
    status: string;
    credits: number;
    outputTokens: number;
    conversationId: string | null;
    chatRequestId: string;
  }>(
    `SELECT status::text, credits, "outputTokens", "conversationId"::text AS "conversationId", "chatRequestId"::text AS "chatRequestId" FROM "LedgerEntry" WHERE "userId" = $1 ORDER BY "createdAt"`,
    [userId],
  );
}

describe('conversations through the chat pipeline: stop, delete, regenerate, edit, events', () => {
  let fake: FakeModelServer;
  let a: TestApp;
  let b: TestApp;
  let baseA: string;
  let baseB: string;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
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
    await fake.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Hello', ' world'] };
    fake.requests.length = 0;
  });

  async function conversation(
    cookie: string,
    id: string,
  ): Promise<{ messages: Message[]; currentMessageId: string | null }> {
    return (
      await a.http
        .get(`/v1/conversations/${id}`)
        .set('Cookie', cookie)
        .expect(200)
    ).body;
  }

  describe('POST /v1/chat/stop', () => {
    it('ends a live run: the provider call is aborted, the stream ends cleanly with the text so far, only that is billed, a replay says stopped', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      const release = holding(fake, ['first', ' second', ' never']);
      const closedBefore = fake.closedEarly;
      const call = chat(baseA, user.cookie, openai('stop me', key));
      await call.firstChunk;
      await eventually(
        async () =>
          (await call.firstChunk) !== '' && fake.requests.length === 1,
        15_000,
        10,
      );
      const stop = await a.http
        .post('/v1/chat/stop')
        .set('Cookie', user.cookie)
        .send({ idempotencyKey: key })
        .expect(200);
      expect(stop.body).toEqual({
        idempotencyKey: key,
        requestId: expect.any(String),
        conversationId: expect.any(String),
        status: 'stopped',
      });
      const res = await call.response;
      release();
      expect(res.status).toBe(200);
      // The stop lands after the service took 'first' or 'first second' from the provider (the machine's load
      // decides); whatever it was is what the stream ends with, what is billed, replayed and stored.
      expect(['first', 'first second']).toContain(res.body);
      const produced = res.body;
      expect(res.complete).toBe(true);
      await eventually(() => fake.closedEarly > closedBefore, 15_000, 10);
      const [entry] = await ledgerOf(user.id);
      expect(entry).toEqual(
        expect.objectContaining({
          status: 'partial',
          outputTokens: produced.split(' ').length,
          chatRequestId: stop.body.requestId,
        }),
      );
      const replay = await chat(baseA, user.cookie, openai('stop me', key))
        .response;
      expect(replay.body).toBe(produced);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['x-run-status']).toBe('stopped');
      const events = parseEvents(
        (
          await post(
            baseA,
            '/v1/chat',
            user.cookie,
            openai('stop me', key),
            EVENTS,
          ).response
        ).body,
      );
      expect(events.at(-1)).toEqual({
        event: 'done',
        data: { status: 'stopped' },
      });
      const stored = await conversation(user.cookie, stop.body.conversationId);
      expect(stored.messages.map((m) => m.content)).toEqual([
        'stop me',
        produced,
      ]);
      expect(fake.requests).toHaveLength(1);
    });

    it('stops a run generated on another instance, and a client joined to it there ends too', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      const release = holding(fake, ['over', ' there', ' never']);
      const owner = chat(baseA, user.cookie, openai('remote stop', key));
      await owner.firstChunk;
      await eventually(() => fake.requests.length === 1, 15_000, 10);
      const joined = chat(baseB, user.cookie, openai('remote stop', key));
      await joined.firstChunk;
      const stop = await b.http
        .post('/v1/chat/stop')
        .set('Cookie', user.cookie)
        .send({ idempotencyKey: key })
        .expect(200);
      expect(stop.body.status).toBe('stopped');
      const [first, second] = await Promise.all([
        owner.response,
        joined.response,
      ]);
      release();
      for (const res of [first, second]) {
        expect(res.body).toBe('over there');
        expect(res.complete).toBe(true);
      }
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(await ledgerOf(user.id)).toHaveLength(1);
    });

    it('a stop whose message was lost still happens: the lease renewal reads it from the request', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      const release = holding(fake, ['kept', ' then', ' never']);
      const call = chat(baseA, user.cookie, openai('lost stop', key));
      await call.firstChunk;
      await eventually(() => fake.requests.length === 1, 15_000, 10);
      // As if POST /v1/chat/stop had written its mark and its Redis message had been lost.
      await sql(
        `UPDATE "ChatRequest" SET "stopRequestedAt" = now() WHERE "userId" = $1 AND "idempotencyKey" = $2`,
        [user.id, key],
      );
      await a.app.get(LeaseKeeper).renew();
      const res = await call.response;
      release();
      expect(res.body).toBe('kept then');
      expect(res.complete).toBe(true);
      const [request] = await sql<{ status: string }>(
        `SELECT status::text FROM "ChatRequest" WHERE "userId" = $1`,
        [user.id],
      );
      expect(request.status).toBe('stopped');
    });

    it('answers the status of a run that had already ended, 404 for a key that is not the caller’s, 400 without a key', async () => {
      const user = await registerUser(a.http);
      const other = await registerUser(a.http);
      const key = randomUUID();
      await chat(baseA, user.cookie, openai('done already', key)).response;
      const done = await a.http
        .post('/v1/chat/stop')
        .set('Cookie', user.cookie)
        .send({ idempotencyKey: key })
        .expect(200);
      expect(done.body.status).toBe('completed');
      const replay = await chat(baseA, user.cookie, openai('done already', key))
        .response;
      expect(replay.body).toBe('Hello world');
      expect(replay.headers['x-run-status']).toBe('completed');
      const foreign = await a.http
        .post('/v1/chat/stop')
        .set('Cookie', other.cookie)
        .send({ idempotencyKey: key })
        .expect(404);
      expect(foreign.headers['content-type']).toMatch(
        /^application\/problem\+json/,
      );
      const missing = await a.http
        .post('/v1/chat/stop')
        .set('Cookie', user.cookie)
        .send({})
        .expect(400);
      expect(missing.body.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: 'idempotencyKey' }),
        ]),
      );
      await a.http
        .post('/v1/chat/stop')
        .send({ idempotencyKey: key })
        .expect(401);
    });

    it('a run stopped before its first word answers an empty 200 and bills nothing', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      const release = holding(fake, ['only']);
      const call = chat(baseA, user.cookie, openai('stop early', key));
      await eventually(() => fake.requests.length === 1, 15_000, 10);
      const stop = await a.http
        .post('/v1/chat/stop')
        .set('Cookie', user.cookie)
        .send({ idempotencyKey: key })
        .expect(200);
      release();
      expect(stop.body.status).toBe('stopped');
      const res = await call.response;
      expect(res.status).toBe(200);
      expect(res.body).toBe('');
      expect(await ledgerOf(user.id)).toEqual([]);
      const [usage] = await sql<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM "DailyUsage" WHERE "userId" = $1`,
        [user.id],
      );
      expect(usage).toEqual({ used: 0, reserved: 0 });
    });
  });

  describe('DELETE /v1/conversations/:id', () => {
    it('deletes the conversation and its messages, keeps the ledger without it, and a retry of its key answers 410', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      const res = await chat(baseA, user.cookie, openai('forget me', key))
        .response;
      const id = res.headers['x-conversation-id'] as string;
      const stranger = await registerUser(a.http);
      await a.http
        .delete(`/v1/conversations/${id}`)
        .set('Cookie', stranger.cookie)
        .expect(404);
      await a.http
        .delete(`/v1/conversations/${id}`)
        .set('Cookie', user.cookie)
        .expect(204);
      await a.http
        .get(`/v1/conversations/${id}`)
        .set('Cookie', user.cookie)
        .expect(404);
      await a.http
        .delete(`/v1/conversations/${id}`)
        .set('Cookie', user.cookie)
        .expect(404);
      expect(
        await sql(`SELECT 1 FROM "Message" WHERE "conversationId" = $1`, [id]),
      ).toEqual([]);
      const [entry] = await ledgerOf(user.id);
      expect(entry).toEqual(
        expect.objectContaining({ status: 'completed', conversationId: null }),
      );
      const [request] = await sql<{ responseBody: string | null }>(
        `SELECT "responseBody" FROM "ChatRequest" WHERE "userId" = $1`,
        [user.id],
      );
      expect(request.responseBody).toBeNull();
      const retry = await chat(baseA, user.cookie, openai('forget me', key))
        .response;
      expect(retry.status).toBe(410);
      expect(JSON.parse(retry.body).code).toBe('conversation_deleted');
      expect(fake.requests).toHaveLength(1);
      expect(await ledgerOf(user.id)).toHaveLength(1);
      const next = await chat(
        baseA,
        user.cookie,
        openai('continue', randomUUID(), { conversationId: id }),
      ).response;
      expect(next.status).toBe(404);
    });

    it('stops a run still live in it: the stream ends with its text, what was produced is billed, nothing is stored', async () => {
      const user = await registerUser(a.http);
      const release = holding(fake, ['half', ' way', ' never']);
      const call = chat(baseA, user.cookie, openai('delete while running'));
      await call.firstChunk;
      await eventually(() => fake.requests.length === 1, 15_000, 10);
      const id = (
        await a.http
          .get('/v1/conversations')
          .set('Cookie', user.cookie)
          .expect(200)
      ).body.data[0].id as string;
      await b.http
        .delete(`/v1/conversations/${id}`)
        .set('Cookie', user.cookie)
        .expect(204);
      const res = await call.response;
      release();
      expect(res.body).toBe('half way');
      expect(res.complete).toBe(true);
      await eventually(
        async () => (await ledgerOf(user.id)).length === 1,
        15_000,
        25,
      );
      expect((await ledgerOf(user.id))[0]).toEqual(
        expect.objectContaining({ status: 'partial', conversationId: null }),
      );
      expect(
        await sql(`SELECT 1 FROM "Message" WHERE "conversationId" = $1`, [id]),
      ).toEqual([]);
      const [usage] = await sql<{ reserved: number }>(
        `SELECT reserved FROM "DailyUsage" WHERE "userId" = $1`,
        [user.id],
      );
      expect(usage.reserved).toBe(0);
    });
  });

  describe('regenerate, edit and branches', () => {
    it('regenerates the last answer as an alternative, switches branches, and sends the model only the current branch', async () => {
      const user = await registerUser(a.http);
      fake.mode = { kind: 'ok', words: ['first answer'] };
      const first = await chat(baseA, user.cookie, openai('question one'))
        .response;
      const id = first.headers['x-conversation-id'] as string;
      fake.mode = { kind: 'ok', words: ['second answer'] };
      await chat(
        baseA,
        user.cookie,
        openai('question two', randomUUID(), { conversationId: id }),
      ).response;

      fake.mode = { kind: 'ok', words: ['second answer, again'] };
      fake.requests.length = 0;
      const key = randomUUID();
      const again = await post(
        baseA,
        `/v1/conversations/${id}/regenerate`,
        user.cookie,
        { idempotencyKey: key },
      ).response;
      expect(again.status).toBe(200);
      expect(again.body).toBe('second answer, again');
      expect(again.headers['x-conversation-id']).toBe(id);
      const sent = fake.requests[0] as {
        model: string;
        messages: { role: string; content: string }[];
      };
      expect(sent.messages.map((m) => m.content)).toEqual([
        'question one',
        'first answer',
        'question two',
      ]);

      let stored = await conversation(user.cookie, id);
      expect(stored.messages.map((m) => m.content)).toEqual([
        'question one',
        'first answer',
        'question two',
        'second answer, again',
      ]);
      const [q1, a1, q2, a2] = stored.messages;
      expect(a2.parentId).toBe(q2.id);
      expect(a2.alternatives).toHaveLength(2);
      expect(a2.alternatives[1]).toBe(a2.id);
      expect(q1.alternatives).toEqual([]);
      expect(a1.usage).toEqual(
        expect.objectContaining({
          credits: expect.any(Number),
          outputTokens: 1,
        }),
      );
      expect(q1.usage).toBeNull();
      expect(stored.currentMessageId).toBe(a2.id);

      // A retry replays; the ledger has one entry per run.
      const replay = await post(
        baseA,
        `/v1/conversations/${id}/regenerate`,
        user.cookie,
        { idempotencyKey: key },
      ).response;
      expect(replay.body).toBe('second answer, again');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(fake.requests).toHaveLength(1);
      expect(await ledgerOf(user.id)).toHaveLength(3);

      // Back to the first answer to question two.
      const earlier = a2.alternatives[0];
      const switched = await a.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', user.cookie)
        .send({ currentMessageId: earlier })
        .expect(200);
      expect(switched.body.messages.map((m: Message) => m.content)).toEqual([
        'question one',
        'first answer',
        'question two',
        'second answer',
      ]);
      expect(switched.body.currentMessageId).toBe(earlier);

      // Edit the first question: a new branch from the start; the model sees only it.
      fake.mode = { kind: 'ok', words: ['edited answer'] };
      fake.requests.length = 0;
      const edited = await post(
        baseA,
        `/v1/conversations/${id}/messages/${q1.id}/edit`,
        user.cookie,
        { idempotencyKey: randomUUID(), content: 'question one, rephrased' },
      ).response;
      expect(edited.body).toBe('edited answer');
      expect(
        (fake.requests[0] as { messages: { content: string }[] }).messages.map(
          (m) => m.content,
        ),
      ).toEqual(['question one, rephrased']);
      stored = await conversation(user.cookie, id);
      expect(stored.messages.map((m) => m.content)).toEqual([
        'question one, rephrased',
        'edited answer',
      ]);
      expect(stored.messages[0].parentId).toBeNull();
      expect(stored.messages[0].alternatives).toEqual([
        q1.id,
        stored.messages[0].id,
      ]);

      // Switching to the original first question brings back its newest continuation.
      const back = await a.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', user.cookie)
        .send({ currentMessageId: q1.id })
        .expect(200);
      expect(back.body.messages.map((m: Message) => m.content)).toEqual([
        'question one',
        'first answer',
        'question two',
        'second answer, again',
      ]);
      await a.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', user.cookie)
        .send({ currentMessageId: earlier })
        .expect(200);
      // The next turn continues the current branch.
      fake.mode = { kind: 'ok', words: ['third answer'] };
      fake.requests.length = 0;
      await chat(
        baseA,
        user.cookie,
        openai('question three', randomUUID(), { conversationId: id }),
      ).response;
      expect(
        (fake.requests[0] as { messages: { content: string }[] }).messages.map(
          (m) => m.content,
        ),
      ).toEqual([
        'question one',
        'first answer',
        'question two',
        'second answer',
        'question three',
      ]);
    });

    it('refuses what cannot be regenerated or edited with a clear 4xx, and changes nothing', async () => {
      const user = await registerUser(a.http);
      const stranger = await registerUser(a.http);
      const res = await chat(baseA, user.cookie, openai('only question'))
        .response;
      const id = res.headers['x-conversation-id'] as string;
      const [question, answer] = (await conversation(user.cookie, id)).messages;
      const before = await ledgerOf(user.id);
      const cases: [string, string, unknown, number][] = [
        [
          stranger.cookie,
          `/v1/conversations/${id}/regenerate`,
          { idempotencyKey: randomUUID() },
          404,
        ],
        [
          user.cookie,
          `/v1/conversations/${randomUUID()}/regenerate`,
          { idempotencyKey: randomUUID() },
          404,
        ],
        [
          user.cookie,
          `/v1/conversations/not-a-uuid/regenerate`,
          { idempotencyKey: randomUUID() },
          404,
        ],
        [user.cookie, `/v1/conversations/${id}/regenerate`, {}, 400],
        [
          user.cookie,
          `/v1/conversations/${id}/regenerate`,
          { idempotencyKey: randomUUID(), model: 'no/such-model' },
          400,
        ],
        [
          user.cookie,
          `/v1/conversations/${id}/messages/${answer.id}/edit`,
          { idempotencyKey: randomUUID(), content: 'x' },
          400,
        ],
        [
          user.cookie,
          `/v1/conversations/${id}/messages/${randomUUID()}/edit`,
          { idempotencyKey: randomUUID(), content: 'x' },
          404,
        ],
        [
          user.cookie,
          `/v1/conversations/${id}/messages/${question.id}/edit`,
          { idempotencyKey: randomUUID(), content: '' },
          400,
        ],
        [
          stranger.cookie,
          `/v1/conversations/${id}/messages/${question.id}/edit`,
          { idempotencyKey: randomUUID(), content: 'x' },
          404,
        ],
      ];
      for (const [cookie, path, body, status] of cases) {
        const refused = await post(baseA, path, cookie, body).response;
        expect({ path, status: refused.status }).toEqual({ path, status });
        expect(refused.headers['content-type']).toMatch(
          /^application\/problem\+json/,
        );
      }
      // A conversation whose branch holds no user message has nothing to regenerate.
      const empty = randomUUID();
      await sql(
        `INSERT INTO "Conversation" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'empty', now())`,
        [empty, user.id],
      );
      const nothing = await post(
        baseA,
        `/v1/conversations/${empty}/regenerate`,
        user.cookie,
        { idempotencyKey: randomUUID(), model: 'openai/gpt-4o-mini' },
      ).response;
      expect(nothing.status).toBe(409);
      expect(JSON.parse(nothing.body).code).toBe('nothing_to_regenerate');
      expect(await ledgerOf(user.id)).toEqual(before);
      expect((await conversation(user.cookie, id)).messages).toHaveLength(2);
    });
  });

  describe('server-sent events', () => {
    it('sends meta, delta, usage and done; a replay sends the same events; usage matches the ledger and the stored message', async () => {
      const user = await registerUser(a.http);
      const key = randomUUID();
      fake.mode = { kind: 'ok', words: ['Hello', ' events'] };
      const res = await post(
        baseA,
        '/v1/chat',
        user.cookie,
        openai('events please', key),
        EVENTS,
      ).response;
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(
        'text/event-stream; charset=utf-8',
      );
      const events = parseEvents(res.body);
      const conversationId = res.headers['x-conversation-id'];
      const [entry] = await ledgerOf(user.id);
      expect(events).toEqual([
        {
          event: 'meta',
          data: {
            conversationId,
            requestId: entry.chatRequestId,
            model: 'openai/gpt-4o-mini',
          },
        },
        { event: 'delta', data: { text: 'Hello' } },
        { event: 'delta', data: { text: ' events' } },
        {
          event: 'usage',
          data: {
            inputTokens: 7,
            cachedInputTokens: 0,
            outputTokens: 2,
            credits: entry.credits,
            model: 'openai/gpt-4o-mini',
          },
        },
        { event: 'done', data: { status: 'completed' } },
      ]);
      const replay = await post(
        baseA,
        '/v1/chat',
        user.cookie,
        openai('events please', key),
        EVENTS,
      ).response;
      const replayed = parseEvents(replay.body);
      expect(replayed.filter((event) => event.event !== 'delta')).toEqual(
        events.filter((event) => event.event !== 'delta'),
      );
      expect(
        replayed
          .filter((event) => event.event === 'delta')
          .map((event) => event.data.text)
          .join(''),
      ).toBe('Hello events');
      const joinedElsewhere = parseEvents(
        (
          await post(
            baseB,
            '/v1/chat',
            user.cookie,
            openai('events please', key),
            EVENTS,
          ).response
        ).body,
      );
      expect(joinedElsewhere.at(-2)).toEqual(events.at(-2));
      const stored = await conversation(user.cookie, conversationId as string);
      expect(stored.messages[1].usage).toEqual({
        inputTokens: 7,
        cachedInputTokens: 0,
        outputTokens: 2,
        credits: entry.credits,
        model: 'openai/gpt-4o-mini',
        requestedModel: null,
      });
      expect(fake.requests).toHaveLength(1);
    });

    it('a failure mid-stream sends an error event with its reason, then usage and done failed', async () => {
      const user = await registerUser(a.http);
      fake.mode = { kind: 'break-after', words: ['partial'] };
      const res = await post(
        baseA,
        '/v1/chat',
        user.cookie,
        openai('break please'),
        EVENTS,
      ).response;
      const events = parseEvents(res.body);
      expect(events.map((event) => event.event)).toEqual([
        'meta',
        'delta',
        'error',
        'usage',
        'done',
      ]);
      expect(events[2].data).toEqual({
        code: 'provider_error',
        detail: expect.stringContaining('only what was delivered is billed'),
      });
      expect(events[4].data).toEqual({ status: 'failed' });
      expect(res.complete).toBe(true);
    });

    it('Skill runs and regenerate answer with events too; without the header the answer stays plain text', async () => {
      const user = await registerUser(a.http);
      const skill = await a.http
        .post('/v1/skills')
        .set('Cookie', user.cookie)
        .send({ name: 'Brief', instruction: 'Answer briefly.' })
        .expect(201);
      const run = await post(
        baseA,
        `/v1/skills/${skill.body.id}/run`,
        user.cookie,
        {
          model: 'openai/gpt-4o-mini',
          input: 'hi',
          idempotencyKey: randomUUID(),
        },
        EVENTS,
      ).response;
      const events = parseEvents(run.body);
      expect(events[0].event).toBe('meta');
      expect(events.at(-1)).toEqual({
        event: 'done',
        data: { status: 'completed' },
      });
      const id = run.headers['x-conversation-id'] as string;
      fake.requests.length = 0;
      const again = await post(
        baseA,
        `/v1/conversations/${id}/regenerate`,
        user.cookie,
        { idempotencyKey: randomUUID() },
        EVENTS,
      ).response;
      expect(parseEvents(again.body).map((event) => event.event)).toEqual([
        'meta',
        'delta',
        'delta',
        'usage',
        'done',
      ]);
      // The Skill's instruction is sent again with the regenerated turn.
      expect(
        (fake.requests[0] as { messages: { role: string; content: string }[] })
          .messages[0],
      ).toEqual({ role: 'system', content: 'Answer briefly.' });
      const plain = await post(
        baseA,
        `/v1/conversations/${id}/regenerate`,
        user.cookie,
        { idempotencyKey: randomUUID() },
      ).response;
      expect(plain.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(plain.body).toBe('Hello world');
    });
  });
});
