import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { eventually } from './support/eventually';
import { FakeModelServer } from './support/fake-model-servers';
import { PASSWORD, registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, extractionEnv, TestApp } from './support/test-app';

/**
 * Share links (docs: /tmp/c32/contract.md, "Share links"), black-box through HTTP: a read-only snapshot of
 * a conversation's current branch anyone with the link can read, revoked at once on every instance, and
 * forked by another user into a conversation of their own. Two instances share the database and Redis.
 */

type User = Awaited<ReturnType<typeof registerUser>>;

const APP_URL = 'https://chat.example.test';
const ECHO = 'local/echo';
const OPENAI = 'openai/gpt-4o-mini';
const SHARE_ID = /^[A-Za-z0-9_-]{24}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface Message {
  id: string;
  role: string;
  content: string;
  createdAt: string;
  model: string | null;
  files: { id: string; name: string; kind: string }[];
  toolCalls: {
    id: string;
    tool: string;
    arguments: Record<string, unknown>;
    status: string;
    content: string;
  }[];
  feedback: unknown;
  alternatives: string[];
}

interface Conversation {
  id: string;
  title: string;
  skillId: string | null;
  currentMessageId: string | null;
  messages: Message[];
  share: ShareDto | null;
}

interface ShareDto {
  shareId: string;
  url: string;
  conversationId: string;
  title: string;
  messageCount: number;
  createdAt: string;
}

interface SharedMessage {
  role: string;
  content: string;
  model: string | null;
  toolCalls: Record<string, unknown>[];
  files: Record<string, unknown>[];
  createdAt: string;
}

/** Every string value anywhere in a JSON document. */
function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => [
      key,
      ...stringsIn(item),
    ]);
  return [];
}

function expectProblem(
  res: { status: number; headers: Record<string, string>; body: unknown },
  status: number,
  code: string,
) {
  expect({
    status: res.status,
    code: (res.body as { code?: string }).code,
  }).toEqual({ status, code });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
}

describe('share links', () => {
  let fake: FakeModelServer;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    const env = {
      ...extractionEnv(),
      APP_URL,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
      REDIS_KEY_PREFIX: `test:${randomUUID()}:`,
      // The limits have a test of their own (below); here every request comes from 127.0.0.1.
      RATE_LIMIT_SHARED_IP: '10000/60',
      RATE_LIMIT_SHARE_USER: '10000/60',
    };
    [a, b] = [await bootTestApp(env), await bootTestApp(env)];
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Fake', ' answer'] };
  });

  const conversationOf = async (
    cookie: string,
    id: string,
    t: TestApp = a,
  ): Promise<Conversation> =>
    (
      await t.http
        .get(`/v1/conversations/${id}`)
        .set('Cookie', cookie)
        .expect(200)
    ).body as Conversation;

  /**
   * One turn of `user` through POST /v1/chat; answers the conversation's id once its messages are stored
   * (`expected` messages on the current branch).
   */
  async function turn(
    user: User,
    content: string,
    options: {
      conversationId?: string;
      model?: string;
      fileIds?: string[];
      tools?: string[];
      expected?: number;
    } = {},
  ): Promise<string> {
    const { expected, model = ECHO, ...rest } = options;
    const res = await a.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model,
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content }],
        ...rest,
      });
    expect({ status: res.status, body: res.text }).toEqual({
      status: 200,
      body: expect.any(String),
    });
    const id = res.headers['x-conversation-id'];
    if (expected !== undefined)
      await eventually(
        async () =>
          (await conversationOf(user.cookie, id)).messages.length === expected,
        15_000,
      );
    return id;
  }

  /** A conversation of two echo turns ('<label> one', '<label> two'): four messages. */
  async function twoTurns(user: User, label = 'question'): Promise<string> {
    const id = await turn(user, `${label} one`, { expected: 2 });
    await turn(user, `${label} two`, { conversationId: id, expected: 4 });
    return id;
  }

  const share = (cookie: string, conversationId: string, t: TestApp = a) =>
    t.http
      .post(`/v1/conversations/${conversationId}/share`)
      .set('Cookie', cookie)
      .send();
  const unshare = (cookie: string, conversationId: string, t: TestApp = a) =>
    t.http
      .delete(`/v1/conversations/${conversationId}/share`)
      .set('Cookie', cookie);
  /** GET /v1/shared/:id as the public reads it: no cookie. */
  const readShared = (shareId: string, t: TestApp = a) =>
    t.http.get(`/v1/shared/${shareId}`);
  const fork = (cookie: string | undefined, shareId: string) => {
    const req = a.http.post(`/v1/shared/${shareId}/fork`);
    return (cookie ? req.set('Cookie', cookie) : req).send();
  };

  /** 404 not_found for a link that does not (or no longer) exist(s), still marked noindex. */
  async function expectGone(shareId: string, t: TestApp = a) {
    const res = await readShared(shareId, t);
    expectProblem(res, 404, 'not_found');
    expect(res.headers['x-robots-tag']).toMatch(/noindex/);
  }

  async function readyFile(user: User, content: string, name: string) {
    const res = await a.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', Buffer.from(content), {
        filename: name,
        contentType: 'text/plain',
      })
      .expect(201);
    await eventually(
      async () =>
        (
          await a.http
            .get(`/v1/files/${res.body.id}`)
            .set('Cookie', user.cookie)
        ).body.text.status === 'ready',
      20_000,
    );
    return res.body.id as string;
  }

  describe('POST /v1/conversations/:id/share and GET /v1/shared/:shareId', () => {
    it('shares the current branch: a ShareDto whose url is APP_URL/shared/<24-char id>, and the conversation shows it', async () => {
      const owner = await registerUser(a.http);
      const id = await twoTurns(owner);
      const before = await conversationOf(owner.cookie, id);
      expect(before.share).toBeNull();

      const res = await share(owner.cookie, id).expect(201);
      const dto = res.body as ShareDto;
      expect(dto).toEqual({
        shareId: expect.stringMatching(SHARE_ID),
        url: `${APP_URL}/shared/${dto.shareId}`,
        conversationId: id,
        title: before.title,
        messageCount: 4,
        createdAt: expect.stringMatching(ISO),
      });
      expect((await conversationOf(owner.cookie, id)).share).toEqual(dto);
      // Each link is its own random id.
      const other = await twoTurns(owner, 'another');
      const second = (await share(owner.cookie, other).expect(201))
        .body as ShareDto;
      expect(second.shareId).toMatch(SHARE_ID);
      expect(second.shareId).not.toBe(dto.shareId);
    });

    it('lets anyone without a session read the snapshot: roles, contents, models, tool calls and file names, noindex and private', async () => {
      const owner = await registerUser(a.http);
      const marker = `FILE-CONTENT-${randomBytes(6).toString('hex')}`;
      const fileId = await readyFile(
        owner,
        `The secret of the notes is ${marker}.`,
        'notes.txt',
      );
      const id = await turn(owner, 'What do my notes say?', {
        fileIds: [fileId],
        expected: 2,
      });
      // The call names the owner's file by id: the link must not.
      const search = JSON.stringify({
        query: 'zzqxnothing',
        fileIds: [fileId],
      });
      await turn(owner, `/tool files.search ${search}`, {
        conversationId: id,
        tools: ['files.search'],
        expected: 4,
      });
      fake.mode = { kind: 'ok', words: ['Fake', ' answer'] };
      await turn(owner, 'and with another model?', {
        conversationId: id,
        model: OPENAI,
        expected: 6,
      });
      const conversation = await conversationOf(owner.cookie, id);
      const [q1, a1, q2, a2, q3, a3] = conversation.messages;
      // What the arrangement must have produced for the checks below to mean anything.
      expect(q1.files).toEqual([
        expect.objectContaining({ id: fileId, name: 'notes.txt' }),
      ]);
      expect(a2.toolCalls).toEqual([
        expect.objectContaining({ tool: 'files.search', status: 'ok' }),
      ]);
      const toolResult = a2.toolCalls[0].content;
      expect(toolResult.length).toBeGreaterThan(0);

      const dto = (await share(owner.cookie, id).expect(201)).body as ShareDto;
      const res = await readShared(dto.shareId).expect(200);
      expect(res.headers['x-robots-tag']).toMatch(/noindex/);
      expect(res.headers['cache-control']).toMatch(/private/);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const shared = res.body as {
        shareId: string;
        title: string;
        createdAt: string;
        messages: SharedMessage[];
      };
      expect(shared).toEqual({
        shareId: dto.shareId,
        title: conversation.title,
        createdAt: dto.createdAt,
        messages: [
          {
            role: 'user',
            content: 'What do my notes say?',
            model: null,
            toolCalls: [],
            files: [{ name: 'notes.txt', kind: 'text' }],
            createdAt: q1.createdAt,
          },
          {
            role: 'assistant',
            content: a1.content,
            model: ECHO,
            toolCalls: [],
            files: [],
            createdAt: a1.createdAt,
          },
          {
            role: 'user',
            content: q2.content,
            model: null,
            toolCalls: [],
            files: [],
            createdAt: q2.createdAt,
          },
          {
            role: 'assistant',
            content: a2.content,
            model: ECHO,
            toolCalls: [
              {
                tool: 'files.search',
                arguments: { query: 'zzqxnothing', fileIds: ['[hidden id]'] },
                status: 'ok',
              },
            ],
            files: [],
            createdAt: a2.createdAt,
          },
          {
            role: 'user',
            content: 'and with another model?',
            model: null,
            toolCalls: [],
            files: [],
            createdAt: q3.createdAt,
          },
          {
            role: 'assistant',
            content: 'Fake answer',
            model: OPENAI,
            toolCalls: [],
            files: [],
            createdAt: a3.createdAt,
          },
        ],
      });
      expect(a1.content).toBe('Echo: What do my notes say?');

      // Nothing that names the owner, the conversation, a message, a file or a tool execution, and no file
      // text or tool result (the echo's answer quotes the result inside its text; never as a value of its own).
      // (The file's id is in the text the owner wrote to call the tool, which the link shows as written;
      // everywhere else it is hidden: the exact body above.)
      const forbidden = [
        owner.email,
        owner.id,
        id,
        marker,
        ...conversation.messages.map((message) => message.id),
        ...a2.toolCalls.map((call) => call.id),
      ];
      for (const secret of forbidden)
        expect({ secret, found: res.text.includes(secret) }).toEqual({
          secret,
          found: false,
        });
      expect(stringsIn(res.body)).not.toContain(toolResult);

      // The same for a signed-in stranger, and on the other instance.
      const stranger = await registerUser(a.http);
      const asStranger = await a.http
        .get(`/v1/shared/${dto.shareId}`)
        .set('Cookie', stranger.cookie)
        .expect(200);
      expect(asStranger.body).toEqual(shared);
      expect((await readShared(dto.shareId, b).expect(200)).body).toEqual(
        shared,
      );
    });

    it('is a snapshot: later messages are not in it; sharing again gives a new id, the old one 404, the new one the new messages', async () => {
      const owner = await registerUser(a.http);
      const id = await turn(owner, 'snapshot one', { expected: 2 });
      const first = (await share(owner.cookie, id).expect(201))
        .body as ShareDto;
      expect(first.messageCount).toBe(2);
      await turn(owner, 'snapshot two', { conversationId: id, expected: 4 });

      const stale = (await readShared(first.shareId).expect(200)).body as {
        messages: SharedMessage[];
      };
      expect(stale.messages.map((message) => message.content)).toEqual([
        'snapshot one',
        'Echo: snapshot one',
      ]);
      // Renaming the conversation does not change the snapshot either.
      await a.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', owner.cookie)
        .send({ title: 'Renamed after sharing' })
        .expect(200);
      expect((await readShared(first.shareId).expect(200)).body.title).toBe(
        first.title,
      );
      expect(first.title).not.toBe('Renamed after sharing');

      const second = (await share(owner.cookie, id).expect(201))
        .body as ShareDto;
      expect(second.shareId).toMatch(SHARE_ID);
      expect(second.shareId).not.toBe(first.shareId);
      expect(second.messageCount).toBe(4);
      expect(second.title).toBe('Renamed after sharing');
      expect(second.url).toBe(`${APP_URL}/shared/${second.shareId}`);
      await expectGone(first.shareId);
      await expectGone(first.shareId, b);
      const fresh = (await readShared(second.shareId).expect(200)).body as {
        title: string;
        messages: SharedMessage[];
      };
      expect(fresh.title).toBe('Renamed after sharing');
      expect(fresh.messages.map((message) => message.content)).toEqual([
        'snapshot one',
        'Echo: snapshot one',
        'snapshot two',
        'Echo: snapshot two',
      ]);
      expect((await conversationOf(owner.cookie, id)).share).toEqual(second);
      // One link per conversation: the list holds the new one only.
      const listed = (
        await a.http.get('/v1/shares').set('Cookie', owner.cookie).expect(200)
      ).body as { data: ShareDto[] };
      expect(listed.data).toEqual([second]);
    });

    it('holds only the current branch: an edited question replaces what followed it, switching back shares the other branch', async () => {
      const owner = await registerUser(a.http);
      const id = await twoTurns(owner, 'branch');
      const [q1] = (await conversationOf(owner.cookie, id)).messages;
      const edited = await a.http
        .post(`/v1/conversations/${id}/messages/${q1.id}/edit`)
        .set('Cookie', owner.cookie)
        .send({ idempotencyKey: randomUUID(), content: 'branch one, edited' });
      expect(edited.status).toBe(200);
      await eventually(async () => {
        const now = await conversationOf(owner.cookie, id);
        return (
          now.messages.length === 2 &&
          now.messages[1]?.content === 'Echo: branch one, edited'
        );
      }, 15_000);

      const onEdit = (await share(owner.cookie, id).expect(201))
        .body as ShareDto;
      expect(onEdit.messageCount).toBe(2);
      const editedSnapshot = (await readShared(onEdit.shareId).expect(200))
        .body as { messages: SharedMessage[] };
      expect(editedSnapshot.messages.map((message) => message.content)).toEqual(
        ['branch one, edited', 'Echo: branch one, edited'],
      );

      // Back to the original first question: its branch (four messages) is the current one again.
      await a.http
        .patch(`/v1/conversations/${id}`)
        .set('Cookie', owner.cookie)
        .send({ currentMessageId: q1.id })
        .expect(200);
      const onOriginal = (await share(owner.cookie, id).expect(201))
        .body as ShareDto;
      expect(onOriginal.messageCount).toBe(4);
      const originalSnapshot = (
        await readShared(onOriginal.shareId).expect(200)
      ).body as { messages: SharedMessage[] };
      expect(
        originalSnapshot.messages.map((message) => message.content),
      ).toEqual([
        'branch one',
        'Echo: branch one',
        'branch two',
        'Echo: branch two',
      ]);
      await expectGone(onEdit.shareId);
    });

    it('refuses to share a conversation with no message yet (409 conflict), creating no link', async () => {
      const owner = await registerUser(a.http);
      // No route creates an empty conversation: arranged in the database.
      const empty = randomUUID();
      await sql(
        `INSERT INTO "Conversation" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'empty', now())`,
        [empty, owner.id],
      );
      expectProblem(await share(owner.cookie, empty), 409, 'conflict');
      expect(
        (await a.http.get('/v1/shares').set('Cookie', owner.cookie).expect(200))
          .body,
      ).toEqual({ data: [], nextCursor: null });
      expect((await conversationOf(owner.cookie, empty)).share).toBeNull();
    });
  });

  describe('revocation', () => {
    it('DELETE share answers 204 and the link is 404 at once, on this instance and on another one', async () => {
      const owner = await registerUser(a.http);
      const id = await turn(owner, 'revoke me', { expected: 2 });
      const dto = (await share(owner.cookie, id).expect(201)).body as ShareDto;
      // Both instances serve it first (whatever either might keep).
      await readShared(dto.shareId, a).expect(200);
      await readShared(dto.shareId, b).expect(200);

      const res = await unshare(owner.cookie, id).expect(204);
      expect(res.text).toBe('');
      await expectGone(dto.shareId, b);
      await expectGone(dto.shareId, a);
      expect((await conversationOf(owner.cookie, id)).share).toBeNull();
      // The conversation itself is untouched, and a second DELETE (nothing shared) is still 204.
      expect((await conversationOf(owner.cookie, id)).messages).toHaveLength(2);
      await unshare(owner.cookie, id).expect(204);
      // Never shared at all: 204 too.
      const never = await turn(owner, 'never shared', { expected: 2 });
      await unshare(owner.cookie, never).expect(204);
      expect(
        (await a.http.get('/v1/shares').set('Cookie', owner.cookie).expect(200))
          .body.data,
      ).toEqual([]);
    });

    it('deleting the conversation revokes its link at once on every instance', async () => {
      const owner = await registerUser(a.http);
      const id = await turn(owner, 'delete my conversation', { expected: 2 });
      const dto = (await share(owner.cookie, id).expect(201)).body as ShareDto;
      await readShared(dto.shareId, b).expect(200);
      await a.http
        .delete(`/v1/conversations/${id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      await expectGone(dto.shareId, b);
      await expectGone(dto.shareId, a);
      expect(
        (await a.http.get('/v1/shares').set('Cookie', owner.cookie).expect(200))
          .body.data,
      ).toEqual([]);
      const stranger = await registerUser(a.http);
      expectProblem(await fork(stranger.cookie, dto.shareId), 404, 'not_found');
    });

    it('a share racing the conversation’s deletion answers 404 and leaves no link (not a 500)', async () => {
      const owner = await registerUser(a.http);
      const id = await turn(owner, 'deleted while shared', { expected: 2 });
      // The deletion holds the row, uncommitted, while the share is asked for; then commits.
      const deleting = new Client({
        connectionString: process.env.TEST_DATABASE_URL,
      });
      await deleting.connect();
      try {
        await deleting.query('BEGIN');
        await deleting.query('DELETE FROM "Conversation" WHERE id = $1', [id]);
        const sharing = share(owner.cookie, id).then((res) => res);
        await eventually(async () => {
          const waiting = await sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query LIKE '%ConversationShare%'`,
          );
          return waiting[0].n > 0;
        }, 15_000);
        await deleting.query('COMMIT');
        expectProblem(await sharing, 404, 'not_found');
      } finally {
        await deleting.end();
      }
      const [left] = await sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM "ConversationShare" WHERE "conversationId" = $1',
        [id],
      );
      expect(left.n).toBe(0);
    });

    it('deleting the account revokes its links at once on every instance', async () => {
      const owner = await registerUser(a.http);
      const first = await turn(owner, 'account link one', { expected: 2 });
      const second = await turn(owner, 'account link two', { expected: 2 });
      const links = [
        (await share(owner.cookie, first).expect(201)).body as ShareDto,
        (await share(owner.cookie, second).expect(201)).body as ShareDto,
      ];
      for (const link of links) await readShared(link.shareId, b).expect(200);
      await a.http
        .delete('/v1/auth/me')
        .set('Cookie', owner.cookie)
        .send({ password: PASSWORD, confirm: 'DELETE' })
        .expect(204);
      for (const link of links) {
        await expectGone(link.shareId, b);
        await expectGone(link.shareId, a);
      }
    });
  });

  describe('GET /v1/shares and who may share', () => {
    it('lists the caller’s links newest first, page by page, and no one else’s', async () => {
      const owner = await registerUser(a.http);
      const other = await registerUser(a.http);
      const theirs = await turn(other, 'not yours', { expected: 2 });
      await share(other.cookie, theirs).expect(201);

      const made: ShareDto[] = [];
      for (const label of ['list one', 'list two', 'list three']) {
        const id = await turn(owner, label, { expected: 2 });
        made.push((await share(owner.cookie, id).expect(201)).body);
        // Distinct creation times, so "newest first" has one answer.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const seen: ShareDto[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await a.http
          .get('/v1/shares')
          .query({ limit: 2, ...(cursor ? { cursor } : {}) })
          .set('Cookie', owner.cookie)
          .expect(200);
        const page = res.body as {
          data: ShareDto[];
          nextCursor: string | null;
        };
        expect(page.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.data);
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor && pages < 5);
      expect(pages).toBe(2);
      expect(seen).toEqual([...made].reverse());

      const all = await a.http
        .get('/v1/shares')
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(all.body).toEqual({ data: [...made].reverse(), nextCursor: null });
      const fresh = await registerUser(a.http);
      expect(
        (await a.http.get('/v1/shares').set('Cookie', fresh.cookie).expect(200))
          .body,
      ).toEqual({ data: [], nextCursor: null });
    });

    it('refuses a bad limit or cursor with 400 and a caller without a session with 401', async () => {
      const owner = await registerUser(a.http);
      for (const query of [
        { limit: 0 },
        { limit: 101 },
        { limit: 'ten' },
        { cursor: 'garbage' },
      ]) {
        const res = await a.http
          .get('/v1/shares')
          .query(query)
          .set('Cookie', owner.cookie);
        expect({ query, status: res.status, code: res.body.code }).toEqual({
          query,
          status: 400,
          code: 'validation_failed',
        });
      }
      expectProblem(await a.http.get('/v1/shares'), 401, 'unauthenticated');
    });

    it('another user cannot share or unshare a conversation that is not theirs (404), and the owner’s link stays', async () => {
      const owner = await registerUser(a.http);
      const stranger = await registerUser(a.http);
      const id = await turn(owner, 'mine only', { expected: 2 });
      const dto = (await share(owner.cookie, id).expect(201)).body as ShareDto;

      expectProblem(await share(stranger.cookie, id), 404, 'not_found');
      expectProblem(await unshare(stranger.cookie, id), 404, 'not_found');
      expect((await readShared(dto.shareId).expect(200)).body.shareId).toBe(
        dto.shareId,
      );
      expect((await conversationOf(owner.cookie, id)).share).toEqual(dto);
      expect(
        (
          await a.http
            .get('/v1/shares')
            .set('Cookie', stranger.cookie)
            .expect(200)
        ).body.data,
      ).toEqual([]);
      // Without a session: 401, nothing changed.
      expectProblem(
        await a.http.post(`/v1/conversations/${id}/share`).send(),
        401,
        'unauthenticated',
      );
      expectProblem(
        await a.http.delete(`/v1/conversations/${id}/share`),
        401,
        'unauthenticated',
      );
      await readShared(dto.shareId).expect(200);
    });

    it('answers 404, never 500, for unknown and malformed ids on every share route', async () => {
      const owner = await registerUser(a.http);
      for (const conversationId of [
        randomUUID(),
        'not-a-uuid',
        '123',
        `${randomUUID()}x`,
      ]) {
        expectProblem(
          await share(owner.cookie, conversationId),
          404,
          'not_found',
        );
        expectProblem(
          await unshare(owner.cookie, conversationId),
          404,
          'not_found',
        );
      }
      const unknownShareIds = [
        randomBytes(18).toString('base64url'), // well formed, unknown
        'short',
        'x'.repeat(200),
        '%20%20', // two spaces
        "'%20OR%201=1%20--",
        `${randomBytes(18).toString('base64url')}==`,
      ];
      for (const shareId of unknownShareIds) {
        const res = await readShared(shareId);
        expect({ shareId, status: res.status }).toEqual({
          shareId,
          status: 404,
        });
        expect(res.body.code).toBe('not_found');
        expect(res.headers['x-robots-tag']).toMatch(/noindex/);
        const forked = await fork(owner.cookie, shareId);
        expect({ shareId, status: forked.status }).toEqual({
          shareId,
          status: 404,
        });
      }
    });
  });

  describe('rate limits: shared-ip on GET /v1/shared/:shareId, share-user on share and fork', () => {
    let limited: TestApp;
    beforeAll(async () => {
      limited = await bootTestApp({
        APP_URL,
        TRUST_PROXY: 'loopback',
        RATE_LIMIT_SHARED_IP: '3/60',
        RATE_LIMIT_SHARE_USER: '2/60',
      });
    });
    afterAll(() => limited?.close());

    const address = () =>
      `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

    /** A conversation of one echo turn on the limited app. */
    async function limitedConversation(user: User, content: string) {
      const res = await limited.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send({
          model: ECHO,
          idempotencyKey: randomUUID(),
          messages: [{ role: 'user', content }],
        })
        .expect(200);
      const id = res.headers['x-conversation-id'];
      await eventually(
        async () =>
          (
            await limited.http
              .get(`/v1/conversations/${id}`)
              .set('Cookie', user.cookie)
          ).body.messages?.length === 2,
        15_000,
      );
      return id;
    }
    const limitedShare = (user: User, id: string) =>
      limited.http
        .post(`/v1/conversations/${id}/share`)
        .set('Cookie', user.cookie)
        .send();

    function expectLimited(res: {
      status: number;
      headers: Record<string, string>;
      body: unknown;
    }) {
      expectProblem(res, 429, 'rate_limited');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    }

    it('answers 429 with Retry-After and noindex past RATE_LIMIT_SHARED_IP, counting misses too, per client address', async () => {
      const owner = await registerUser(limited.http);
      const id = await limitedConversation(owner, 'limited');
      const dto = (await limitedShare(owner, id).expect(201)).body as ShareDto;

      const ip = address();
      const from = (client: string, shareId = dto.shareId) =>
        limited.http
          .get(`/v1/shared/${shareId}`)
          .set('X-Forwarded-For', client);
      // Guessing ids counts against the limit as much as reading a real one.
      expect(
        (await from(ip, randomBytes(18).toString('base64url'))).status,
      ).toBe(404);
      expect(
        (await from(ip, randomBytes(18).toString('base64url'))).status,
      ).toBe(404);
      expect((await from(ip)).status).toBe(200);
      const blocked = await from(ip);
      expectLimited(blocked);
      expect(blocked.headers['x-robots-tag']).toMatch(/noindex/);
      expect(JSON.stringify(blocked.body)).not.toContain('Echo: limited');
      // Another address is not affected.
      const elsewhere = await from(address());
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.headers['x-robots-tag']).toMatch(/noindex/);
    });

    it('answers 429 past RATE_LIMIT_SHARE_USER to one user sharing and forking, not to another user', async () => {
      const owner = await registerUser(limited.http);
      const ids = [
        await limitedConversation(owner, 'share limit one'),
        await limitedConversation(owner, 'share limit two'),
        await limitedConversation(owner, 'share limit three'),
      ];
      const first = (await limitedShare(owner, ids[0]).expect(201))
        .body as ShareDto;
      await limitedShare(owner, ids[1]).expect(201);
      const blocked = await limitedShare(owner, ids[2]);
      expectLimited(blocked);
      expect(
        (
          await limited.http
            .get(`/v1/conversations/${ids[2]}`)
            .set('Cookie', owner.cookie)
            .expect(200)
        ).body.share,
      ).toBeNull();

      // Forks count against the forking user's own limit.
      const reader = await registerUser(limited.http);
      const forkOn = (user: User) =>
        limited.http
          .post(`/v1/shared/${first.shareId}/fork`)
          .set('Cookie', user.cookie)
          .send();
      await forkOn(reader).expect(201);
      await forkOn(reader).expect(201);
      expectLimited(await forkOn(reader));
      expect(
        (
          await limited.http
            .get('/v1/conversations')
            .set('Cookie', reader.cookie)
            .expect(200)
        ).body.data,
      ).toHaveLength(2);
      await forkOn(await registerUser(limited.http)).expect(201);
    });
  });

  describe('POST /v1/shared/:shareId/fork', () => {
    it('copies the snapshot into a new conversation of the caller, who can go on with it; the owner’s stays as it was', async () => {
      const owner = await registerUser(a.http);
      const reader = await registerUser(a.http);
      const id = await turn(owner, 'fork question one', { expected: 2 });
      fake.mode = { kind: 'ok', words: ['Fake', ' answer'] };
      await turn(owner, 'fork question two', {
        conversationId: id,
        model: OPENAI,
        expected: 4,
      });
      const dto = (await share(owner.cookie, id).expect(201)).body as ShareDto;
      const snapshot = (await readShared(dto.shareId).expect(200)).body as {
        title: string;
        messages: SharedMessage[];
      };
      const ownerBefore = await conversationOf(owner.cookie, id);

      const res = await fork(reader.cookie, dto.shareId).expect(201);
      const forked = res.body as Conversation;
      expect(forked.id).toEqual(expect.any(String));
      expect(forked.id).not.toBe(id);
      expect(forked).toEqual(
        expect.objectContaining({
          title: snapshot.title,
          skillId: null,
          share: null,
          currentMessageId: forked.messages.at(-1)?.id,
        }),
      );
      expect(
        forked.messages.map(({ role, content, model, files }) => ({
          role,
          content,
          model,
          files,
        })),
      ).toEqual([
        {
          role: 'user',
          content: 'fork question one',
          model: null,
          files: [],
        },
        {
          role: 'assistant',
          content: 'Echo: fork question one',
          model: ECHO,
          files: [],
        },
        {
          role: 'user',
          content: 'fork question two',
          model: null,
          files: [],
        },
        {
          role: 'assistant',
          content: 'Fake answer',
          model: OPENAI,
          files: [],
        },
      ]);
      const originalIds = ownerBefore.messages.map((message) => message.id);
      for (const message of forked.messages) {
        expect(originalIds).not.toContain(message.id);
        expect(message.feedback).toBeNull();
      }
      // The same conversation as GET shows it, in the reader's list (and not in the owner's).
      expect(await conversationOf(reader.cookie, forked.id)).toEqual(forked);
      const readerList = (
        await a.http
          .get('/v1/conversations')
          .set('Cookie', reader.cookie)
          .expect(200)
      ).body.data as { id: string; title: string }[];
      expect(readerList).toEqual([
        expect.objectContaining({ id: forked.id, title: snapshot.title }),
      ]);
      const ownerList = (
        await a.http
          .get('/v1/conversations')
          .set('Cookie', owner.cookie)
          .expect(200)
      ).body.data as { id: string }[];
      expect(ownerList.map((conversation) => conversation.id)).toEqual([id]);
      // The owner's conversation stays the owner's.
      await a.http
        .get(`/v1/conversations/${id}`)
        .set('Cookie', reader.cookie)
        .expect(404);

      // The reader goes on: the model receives the copied history before the new question.
      fake.mode = { kind: 'ok', words: ['Continued'] };
      const before = fake.requests.length;
      await turn(reader, 'fork question three', {
        conversationId: forked.id,
        model: OPENAI,
        expected: 6,
      });
      expect(fake.requests.length).toBe(before + 1);
      const sent = (
        fake.requests.at(-1)!.messages as { role: string; content: string }[]
      ).filter((message) => message.role !== 'system');
      expect(sent).toEqual([
        { role: 'user', content: 'fork question one' },
        { role: 'assistant', content: 'Echo: fork question one' },
        { role: 'user', content: 'fork question two' },
        { role: 'assistant', content: 'Fake answer' },
        { role: 'user', content: 'fork question three' },
      ]);
      const grown = await conversationOf(reader.cookie, forked.id);
      expect(grown.messages.map((message) => message.content)).toEqual([
        'fork question one',
        'Echo: fork question one',
        'fork question two',
        'Fake answer',
        'fork question three',
        'Continued',
      ]);
      // And with the echo model too, on the same conversation.
      await turn(reader, 'fork question four', {
        conversationId: forked.id,
        expected: 8,
      });

      // Nothing of this reached the owner's conversation or the snapshot.
      expect(await conversationOf(owner.cookie, id)).toEqual(ownerBefore);
      expect((await readShared(dto.shareId).expect(200)).body).toEqual(
        snapshot,
      );
    });

    it('copies tool calls (without their results) and no files', async () => {
      const owner = await registerUser(a.http);
      const reader = await registerUser(a.http);
      const id = await turn(owner, '/tool files.search {"query":"zzqxfork"}', {
        tools: ['files.search'],
        expected: 2,
      });
      const dto = (await share(owner.cookie, id).expect(201)).body as ShareDto;
      const forked = (await fork(reader.cookie, dto.shareId).expect(201))
        .body as Conversation;
      expect(forked.messages).toHaveLength(2);
      expect(forked.messages[1]).toEqual(
        expect.objectContaining({
          role: 'assistant',
          model: ECHO,
          files: [],
          toolCalls: [
            expect.objectContaining({
              tool: 'files.search',
              arguments: { query: 'zzqxfork' },
              status: 'ok',
            }),
          ],
        }),
      );
      expect(forked.messages[0].toolCalls).toEqual([]);
    });

    it('a shared Skill run is shared as its conversation shows it; its fork is a plain conversation (skillId null)', async () => {
      const owner = await registerUser(a.http);
      const reader = await registerUser(a.http);
      const skill = (
        await a.http
          .post('/v1/skills')
          .set('Cookie', owner.cookie)
          .send({ name: 'Brief', instruction: 'Answer briefly.' })
          .expect(201)
      ).body as { id: string };
      const run = await a.http
        .post(`/v1/skills/${skill.id}/run`)
        .set('Cookie', owner.cookie)
        .send({
          model: ECHO,
          input: 'skill words',
          idempotencyKey: randomUUID(),
        })
        .expect(200);
      const id = run.headers['x-conversation-id'];
      await eventually(
        async () =>
          (await conversationOf(owner.cookie, id)).messages.at(-1)?.role ===
          'assistant',
        15_000,
      );
      const original = await conversationOf(owner.cookie, id);
      expect(original.skillId).toBe(skill.id);
      const dto = (await share(owner.cookie, id).expect(201)).body as ShareDto;
      const snapshot = (await readShared(dto.shareId).expect(200)).body as {
        messages: SharedMessage[];
      };
      expect(
        snapshot.messages.map(({ role, content, model }) => ({
          role,
          content,
          model,
        })),
      ).toEqual(
        original.messages.map(({ role, content, model }) => ({
          role,
          content,
          model,
        })),
      );
      expect(snapshot.messages.map((message) => message.content)).toEqual([
        'skill words',
        'Echo: skill words',
      ]);

      const forked = (await fork(reader.cookie, dto.shareId).expect(201))
        .body as Conversation & { skillVersionId: string | null };
      expect(forked.skillId).toBeNull();
      expect(forked.skillVersionId).toBeNull();
      expect(
        forked.messages.map(({ role, content, model }) => ({
          role,
          content,
          model,
        })),
      ).toEqual(
        snapshot.messages.map(({ role, content, model }) => ({
          role,
          content,
          model,
        })),
      );
    });

    it('needs a session (401) and an existing link (404)', async () => {
      const owner = await registerUser(a.http);
      const reader = await registerUser(a.http);
      const id = await turn(owner, 'fork rules', { expected: 2 });
      const dto = (await share(owner.cookie, id).expect(201)).body as ShareDto;
      expectProblem(await fork(undefined, dto.shareId), 401, 'unauthenticated');
      expectProblem(
        await fork(reader.cookie, randomBytes(18).toString('base64url')),
        404,
        'not_found',
      );
      await unshare(owner.cookie, id).expect(204);
      expectProblem(await fork(reader.cookie, dto.shareId), 404, 'not_found');
      expect(
        (
          await a.http
            .get('/v1/conversations')
            .set('Cookie', reader.cookie)
            .expect(200)
        ).body.data,
      ).toEqual([]);
    });
  });
});
