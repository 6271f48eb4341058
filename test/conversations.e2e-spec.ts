import { randomUUID } from 'node:crypto';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

/** Inserts a conversation of `userId` updated at `updatedAt`, with the given messages in order (one branch). */
async function seedConversation(
  userId: string,
  updatedAt: string,
  messages: [string, string][] = [],
): Promise<string> {
  const id = randomUUID();
  await sql(
    `INSERT INTO "Conversation" (id, "userId", title, "createdAt", "updatedAt") VALUES ($1, $2, $3, $4, $4)`,
    [id, userId, `title ${updatedAt}`, updatedAt],
  );
  let parentId: string | null = null;
  for (const [role, content] of messages) {
    const messageId = randomUUID();
    await sql(
      `INSERT INTO "Message" (id, "conversationId", "parentId", role, content) VALUES ($1, $2, $3, $4, $5)`,
      [messageId, id, parentId, role, content],
    );
    parentId = messageId;
  }
  await sql(`UPDATE "Conversation" SET "currentMessageId" = $2 WHERE id = $1`, [
    id,
    parentId,
  ]);
  return id;
}

describe('conversations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(() => t.close());

  it('lists only the caller’s conversations, newest first, page by page without gaps or repeats', async () => {
    const owner = await registerUser(t.http);
    const other = await registerUser(t.http);
    const times = [
      '2026-01-01T10:00:00Z',
      '2026-01-03T10:00:00Z',
      '2026-01-02T10:00:00Z',
      '2026-01-04T10:00:00Z',
      '2026-01-04T10:00:00Z',
    ];
    const ids = [];
    for (const time of times) ids.push(await seedConversation(owner.id, time));
    await seedConversation(other.id, '2026-01-05T10:00:00Z');

    const seen: { id: string; updatedAt: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await t.http
        .get('/v1/conversations')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set('Cookie', owner.cookie)
        .expect(200);
      const page = res.body as {
        data: { id: string; updatedAt: string }[];
        nextCursor: string | null;
      };
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen.map((c) => c.id).sort()).toEqual([...ids].sort());
    const order = seen.map((c) => c.updatedAt);
    expect(order).toEqual([...order].sort().reverse());
  });

  it('answers one empty page for an account without conversations', async () => {
    const { cookie } = await registerUser(t.http);
    const res = await t.http
      .get('/v1/conversations')
      .set('Cookie', cookie)
      .expect(200);
    expect(res.body).toEqual({ data: [], nextCursor: null });
  });

  it('refuses a bad limit or cursor with 400', async () => {
    const { cookie } = await registerUser(t.http);
    for (const query of [
      { limit: 0 },
      { limit: 101 },
      { limit: 'ten' },
      { cursor: 'garbage' },
      { cursor: Buffer.from('x|y').toString('base64url') },
      { sort: 'asc' },
    ]) {
      const res = await t.http
        .get('/v1/conversations')
        .query(query)
        .set('Cookie', cookie);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('returns one conversation with its messages in order', async () => {
    const { cookie, id: userId } = await registerUser(t.http);
    const id = await seedConversation(userId, '2026-02-01T00:00:00Z', [
      ['system', 'Be brief.'],
      ['user', 'Hello'],
      ['assistant', 'Hi!'],
    ]);
    const res = await t.http
      .get(`/v1/conversations/${id}`)
      .set('Cookie', cookie)
      .expect(200);
    expect(res.body).toEqual(
      expect.objectContaining({
        id,
        title: 'title 2026-02-01T00:00:00Z',
        skillId: null,
      }),
    );
    expect(
      res.body.messages.map((m: { role: string; content: string }) => [
        m.role,
        m.content,
      ]),
    ).toEqual([
      ['system', 'Be brief.'],
      ['user', 'Hello'],
      ['assistant', 'Hi!'],
    ]);
  });

  it('answers another user’s conversation, an unknown id and a malformed id with the same 404', async () => {
    const owner = await registerUser(t.http);
    const stranger = await registerUser(t.http);
    const id = await seedConversation(owner.id, '2026-02-01T00:00:00Z', [
      ['user', 'secret'],
    ]);
    const responses = await Promise.all(
      [id, randomUUID(), 'not-a-uuid'].map((target) =>
        t.http
          .get(`/v1/conversations/${target}`)
          .set('Cookie', stranger.cookie),
      ),
    );
    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(
        /^application\/problem\+json/,
      );
    }
    const bodies = responses.map((res) => ({
      ...res.body,
      requestId: undefined,
    }));
    expect(bodies[0]).toEqual(bodies[1]);
    expect(bodies[0]).toEqual(bodies[2]);
    expect(JSON.stringify(bodies[0])).not.toContain('secret');
  });

  it('answers 401 without a session', async () => {
    await t.http.get('/v1/conversations').expect(401);
    await t.http.get(`/v1/conversations/${randomUUID()}`).expect(401);
  });

  it('shows a run’s cached input tokens and the model asked for, when a fallback answered, wherever its usage is read', async () => {
    const { cookie, id: userId } = await registerUser(t.http);
    const chat = await t.http
      .post('/v1/chat')
      .set('Cookie', cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'six words to echo right back' }],
      })
      .expect(200);
    const conversationId = String(chat.headers['x-conversation-id']);
    // No fake provider here reports cache reads or falls back: the run's entry is made to say so.
    const [entry] = await sql<{
      id: string;
      inputTokens: number;
      outputTokens: number;
      credits: number;
    }>(
      `UPDATE "LedgerEntry" SET "cachedInputTokens" = 5, "requestedModelId" = 'anthropic/claude-haiku-4-5'
        WHERE "userId" = $1 AND kind = 'usage'
        RETURNING id::text, "inputTokens", "outputTokens", credits`,
      [userId],
    );
    expect(entry.inputTokens).toBeGreaterThanOrEqual(5);

    const ledger = await t.http
      .get('/v1/billing/usage')
      .set('Cookie', cookie)
      .expect(200);
    expect(ledger.body.data).toEqual([
      expect.objectContaining({
        id: entry.id,
        model: 'local/echo',
        requestedModelId: 'anthropic/claude-haiku-4-5',
        inputTokens: entry.inputTokens,
        cachedInputTokens: 5,
      }),
    ]);

    const conversation = await t.http
      .get(`/v1/conversations/${conversationId}`)
      .set('Cookie', cookie)
      .expect(200);
    const [question, answer] = conversation.body.messages as {
      usage: Record<string, unknown> | null;
    }[];
    expect(question.usage).toBeNull();
    expect(answer.usage).toEqual({
      inputTokens: entry.inputTokens,
      cachedInputTokens: 5,
      outputTokens: entry.outputTokens,
      credits: entry.credits,
      model: 'local/echo',
      requestedModel: 'anthropic/claude-haiku-4-5',
    });

    const exported = await t.http
      .get('/v1/auth/me/export')
      .set('Cookie', cookie)
      .buffer(true)
      .parse((response, done) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => done(null, text));
      })
      .expect(200);
    const doc = JSON.parse(exported.body as string) as {
      ledger: Record<string, unknown>[];
    };
    expect(doc.ledger).toEqual([
      expect.objectContaining({
        id: entry.id,
        modelId: 'local/echo',
        requestedModelId: 'anthropic/claude-haiku-4-5',
        inputTokens: entry.inputTokens,
        cachedInputTokens: 5,
      }),
    ]);
  });

  describe('PATCH /v1/conversations/:id', () => {
    it('renames and archives without changing the last activity; archived ones leave the default list for archived=true', async () => {
      const { cookie, id: userId } = await registerUser(t.http);
      const id = await seedConversation(userId, '2026-03-01T00:00:00Z', [
        ['user', 'hi'],
      ]);
      const kept = await seedConversation(userId, '2026-03-02T00:00:00Z');
      const renamed = await t.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', cookie)
        .send({ title: '  Trip plans  ' })
        .expect(200);
      expect(renamed.body).toEqual(
        expect.objectContaining({
          id,
          title: 'Trip plans',
          archived: false,
          updatedAt: '2026-03-01T00:00:00.000Z',
        }),
      );
      expect(renamed.body.messages).toHaveLength(1);
      const archived = await t.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', cookie)
        .send({ archived: true })
        .expect(200);
      expect(archived.body).toEqual(
        expect.objectContaining({
          title: 'Trip plans',
          archived: true,
          updatedAt: '2026-03-01T00:00:00.000Z',
        }),
      );
      const active = await t.http
        .get('/v1/conversations')
        .set('Cookie', cookie)
        .expect(200);
      expect(active.body.data.map((c: { id: string }) => c.id)).toEqual([kept]);
      const onlyArchived = await t.http
        .get('/v1/conversations')
        .query({ archived: 'true' })
        .set('Cookie', cookie)
        .expect(200);
      expect(onlyArchived.body.data).toEqual([
        expect.objectContaining({ id, archived: true }),
      ]);
      await t.http
        .get('/v1/conversations')
        .query({ archived: 'false' })
        .set('Cookie', cookie)
        .expect(200);
      await t.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', cookie)
        .send({ archived: false })
        .expect(200);
      const both = await t.http
        .get('/v1/conversations')
        .set('Cookie', cookie)
        .expect(200);
      expect(both.body.data.map((c: { id: string }) => c.id)).toEqual([
        kept,
        id,
      ]);
    });

    it('refuses bad changes with 400 naming the field, another user’s conversation with 404, and changes nothing', async () => {
      const owner = await registerUser(t.http);
      const stranger = await registerUser(t.http);
      const id = await seedConversation(owner.id, '2026-03-01T00:00:00Z', [
        ['user', 'hi'],
      ]);
      const bad: [unknown, string][] = [
        [{}, 'title'],
        [{ title: '' }, 'title'],
        [{ title: '   ' }, 'title'],
        [{ title: 'x'.repeat(201) }, 'title'],
        [{ title: 42 }, 'title'],
        [{ archived: 'yes' }, 'archived'],
        [{ currentMessageId: 'not-a-uuid' }, 'currentMessageId'],
        [{ title: 'ok', role: 'admin' }, 'role'],
      ];
      for (const [body, field] of bad) {
        const res = await t.http
          .patch(`/v1/conversations/${id}`)
          .set('Cookie', owner.cookie)
          .send(body as object);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(
          res.body.errors.map((error: { field: string }) => error.field),
        ).toContain(field);
      }
      const missing = await t.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', owner.cookie)
        .send({ currentMessageId: randomUUID() })
        .expect(404);
      expect(missing.body.errors[0].field).toBe('currentMessageId');
      await t.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', stranger.cookie)
        .send({ title: 'mine now' })
        .expect(404);
      await t.http
        .patch(`/v1/conversations/not-a-uuid`)
        .set('Cookie', owner.cookie)
        .send({ title: 'x' })
        .expect(404);
      const [row] = await sql<{ title: string; archivedAt: Date | null }>(
        `SELECT title, "archivedAt" FROM "Conversation" WHERE id = $1`,
        [id],
      );
      expect(row).toEqual({
        title: 'title 2026-03-01T00:00:00Z',
        archivedAt: null,
      });
    });
  });

  describe('GET /v1/conversations?q=', () => {
    it('finds titles and message text by word prefixes in any language, best matches first, only the caller’s', async () => {
      const { cookie, id: userId } = await registerUser(t.http);
      const other = await registerUser(t.http);
      const inMessage = await seedConversation(userId, '2026-04-03T00:00:00Z', [
        ['user', 'We talked about the Kilimanjaro climb yesterday'],
      ]);
      const inTitle = await seedConversation(userId, '2026-04-01T00:00:00Z', [
        ['user', 'nothing here'],
      ]);
      await sql(
        `UPDATE "Conversation" SET title = 'Kilimanjaro packing list' WHERE id = $1`,
        [inTitle],
      );
      const russian = await seedConversation(userId, '2026-04-02T00:00:00Z', [
        ['assistant', 'Привет, как дела с поездкой?'],
      ]);
      const greek = await seedConversation(userId, '2026-04-02T12:00:00Z', [
        ['user', 'Καλημέρα κόσμε'],
      ]);
      await seedConversation(userId, '2026-04-04T00:00:00Z', [
        ['user', 'unrelated'],
      ]);
      await seedConversation(other.id, '2026-04-05T00:00:00Z', [
        ['user', 'Kilimanjaro for someone else'],
      ]);

      const search = async (q: string, extra: Record<string, string> = {}) =>
        (
          await t.http
            .get('/v1/conversations')
            .query({ q, ...extra })
            .set('Cookie', cookie)
            .expect(200)
        ).body as { data: { id: string }[]; nextCursor: string | null };
      expect((await search('kiliman')).data.map((c) => c.id)).toEqual([
        inTitle,
        inMessage,
      ]);
      expect((await search('KILIMANJARO climb')).data.map((c) => c.id)).toEqual(
        [inMessage],
      );
      expect((await search('поезд')).data.map((c) => c.id)).toEqual([russian]);
      expect((await search('καλημ')).data.map((c) => c.id)).toEqual([greek]);
      expect((await search('nowhere-to-be-found')).data).toEqual([]);
      expect((await search('!!!')).data).toEqual([]);
      expect((await search("o'brien & (x | y):*")).data).toEqual([]);

      const first = await search('kiliman', { limit: '1' });
      expect(first.data.map((c) => c.id)).toEqual([inTitle]);
      const second = await search('kiliman', {
        limit: '1',
        cursor: first.nextCursor as string,
      });
      expect(second).toEqual({
        data: [expect.objectContaining({ id: inMessage })],
        nextCursor: null,
      });

      await t.http
        .patch(`/v1/conversations/${inTitle}`)
        .set('Cookie', cookie)
        .send({ archived: true })
        .expect(200);
      expect((await search('kiliman')).data.map((c) => c.id)).toEqual([
        inMessage,
      ]);
      expect(
        (await search('kiliman', { archived: 'true' })).data.map((c) => c.id),
      ).toEqual([inTitle]);
    });

    it('refuses an empty or oversized q and a cursor from another kind of page with 400', async () => {
      const { cookie } = await registerUser(t.http);
      const timeCursor = Buffer.from(
        `2026-01-01T00:00:00.000Z|${randomUUID()}`,
      ).toString('base64url');
      for (const query of [
        { q: '' },
        { q: 'x'.repeat(201) },
        { q: 'a', cursor: timeCursor },
        { archived: 'maybe' },
      ]) {
        const res = await t.http
          .get('/v1/conversations')
          .query(query)
          .set('Cookie', cookie);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
      }
    });
  });
});
