import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountExportRepository } from '../src/account/export/account-export.repository';
import { chat, listen } from './support/chat-client';
import { eventually } from './support/eventually';
import { registerUser } from './support/factories';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { sql as sqlOn } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

interface Download {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** False when the connection ended without the final chunk. */
  complete: boolean;
}

/** GETs a path over a real socket, keeping the body as it came and whether it ended cleanly (supertest would buffer and hide that). */
function download(baseUrl: string, path: string, cookie: string) {
  let req!: ReturnType<typeof httpRequest>;
  const localPort = new Promise<number>((resolve) => {
    req = httpRequest(`${baseUrl}${path}`, {
      headers: { Cookie: cookie, Connection: 'close' },
    });
    req.on('socket', (socket: Socket) =>
      socket.on('connect', () => resolve(socket.localPort ?? 0)),
    );
  });
  const response = new Promise<Download>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: string[] = [];
      res.setEncoding('utf8');
      res.on('data', (text: string) => chunks.push(text));
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: chunks.join(''),
          complete: res.complete,
        });
      };
      for (const event of ['end', 'error', 'aborted', 'close'])
        res.on(event, finish);
    });
    req.end();
  });
  return { response, localPort, abort: () => req.destroy() };
}

interface ExportDocument {
  format: string;
  exportedAt: string;
  account: Record<string, unknown> & { identities: Record<string, unknown>[] };
  skills: (Record<string, unknown> & { versions: Record<string, unknown>[] })[];
  conversations: (Record<string, unknown> & {
    id: string;
    messages: Record<string, unknown>[];
  })[];
  files: (Record<string, unknown> & { contentUrl: string })[];
  ledger: Record<string, unknown>[];
  creditGrants: Record<string, unknown>[];
  subscriptions: Record<string, unknown>[];
  checkouts: Record<string, unknown>[];
}

const byId = <T extends Record<string, unknown>>(items: T[]) =>
  [...items].sort((a, b) => String(a.id).localeCompare(String(b.id)));

/** One conversation of `messages` messages ('message 1'...), in one statement, answering its id. */
async function seedLongConversation(
  userId: string,
  messages: number,
): Promise<string> {
  const id = randomUUID();
  await sql(
    `INSERT INTO "Conversation" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'long one', now())`,
    [id, userId],
  );
  await sql(
    `INSERT INTO "Message" (id, "conversationId", role, content)
     SELECT gen_random_uuid(), $1, (CASE WHEN n % 2 = 1 THEN 'user' ELSE 'assistant' END)::"MessageRole", 'message ' || n || ' ' || repeat('x', 200)
       FROM generate_series(1, $2::int) AS n ORDER BY n`,
    [id, messages],
  );
  return id;
}

/**
 * On a database of its own: an instance of another suite with text extraction on would take this suite's
 * pending file (the oldest first), find no object in its storage and fail it.
 */
let database: ScratchDatabase;
const sql = <T = Record<string, unknown>>(
  query: string,
  values: unknown[] = [],
) => sqlOn<T>(query, values, database.url);

describe('GET /v1/auth/me/export', () => {
  let t: TestApp;
  let base: string;
  let storageDir: string;
  /** Server-side sockets by the client's port: a test waits for the server to see its client leave. */
  const serverSockets = new Map<number, Socket>();

  beforeAll(async () => {
    storageDir = mkdtempSync(join(tmpdir(), 'chat-export-'));
    database = await createMigratedDatabase('chat_export');
    t = await bootTestApp({
      DATABASE_URL: database.url,
      STORAGE_DIR: storageDir,
      ECHO_DELAY_MS: '1',
    });
    base = await listen(t);
    t.app
      .getHttpServer()
      .on('connection', (socket: Socket) =>
        serverSockets.set(socket.remotePort ?? 0, socket),
      );
  });
  afterAll(async () => {
    await t.close();
    await database.drop();
    rmSync(storageDir, { recursive: true, force: true });
  });
  afterEach(() => jest.restoreAllMocks());

  const exportOf = async (cookie: string) => {
    const res = await t.http
      .get('/v1/auth/me/export')
      .set('Cookie', cookie)
      .buffer(true)
      .parse((response, done) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => done(null, text));
      });
    return { res, text: res.body as string };
  };

  it('exports every section of the caller’s account, and nothing of anyone else’s, with no secrets', async () => {
    const owner = await registerUser(t.http);
    const other = await registerUser(t.http);

    // A Skill with two versions, and a run of it (a conversation tied to the Skill, billed in the ledger).
    const inputSchema = {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    };
    const skill = (
      await t.http
        .post('/v1/skills')
        .set('Cookie', owner.cookie)
        .send({
          name: 'Summarizer',
          instruction: 'Summarize v1.',
          input_schema: inputSchema,
        })
        .expect(201)
    ).body;
    await t.http
      .post(`/v1/skills/${skill.id}/versions`)
      .set('Cookie', owner.cookie)
      .send({ instruction: 'Summarize v2.', output_schema: { type: 'string' } })
      .expect(201);
    const run = await t.http
      .post(`/v1/skills/${skill.id}/run`)
      .set('Cookie', owner.cookie)
      .send({
        model: 'local/echo',
        input: { text: 'skill input' },
        idempotencyKey: randomUUID(),
      })
      .expect(200);
    const skillConversationId = run.headers['x-conversation-id'];

    // A chat of two turns, archived.
    const first = await chat(base, owner.cookie, {
      model: 'local/echo',
      idempotencyKey: randomUUID(),
      messages: [{ role: 'user', content: 'first turn' }],
    }).response;
    const chatConversationId = first.headers['x-conversation-id'] as string;
    await chat(base, owner.cookie, {
      model: 'local/echo',
      idempotencyKey: randomUUID(),
      conversationId: chatConversationId,
      messages: [{ role: 'user', content: 'second turn' }],
    }).response;
    await t.http
      .patch(`/v1/conversations/${chatConversationId}`)
      .set('Cookie', owner.cookie)
      .send({ archived: true })
      .expect(200);

    const fileBytes = Buffer.from('exported notes\n');
    const file = (
      await t.http
        .post('/v1/files')
        .set('Cookie', owner.cookie)
        .attach('file', fileBytes, {
          filename: 'notes.txt',
          contentType: 'text/plain',
        })
        .expect(201)
    ).body;

    // Billing history and sign-in data only an admin, a provider or a webhook would create: inserted.
    const grantId = randomUUID();
    await sql(
      `INSERT INTO "CreditGrant" (id, "userId", "adminId", credits, "firstDay", "lastDay", reason) VALUES ($1, $2, $3, 50, '2026-01-01', '2026-01-31', 'goodwill')`,
      [grantId, owner.id, other.id],
    );
    await sql(
      `INSERT INTO "LedgerEntry" (id, "userId", kind, status, "creditGrantId", credits, "adminId", reason) VALUES ($1, $2, 'grant', 'granted', $3, 50, $4, 'goodwill')`,
      [randomUUID(), owner.id, grantId, other.id],
    );
    const checkoutId = randomUUID();
    await sql(
      `INSERT INTO "Checkout" (id, "userId", "planCode", provider, status, amount, currency, interval, "providerSessionId", url, "completedAt")
       VALUES ($1, $2, 'pro', 'stripe', 'completed', 1900, 'EUR', 'month', 'cs_SESSION_MARKER', 'https://pay.example/URL_MARKER', '2026-01-05T00:00:00Z')`,
      [checkoutId, owner.id],
    );
    const subscriptionId = randomUUID();
    await sql(
      `INSERT INTO "Subscription" (id, "userId", "planCode", provider, "providerSubscriptionId", "providerCustomerId", status, "currentPeriodEnd", "checkoutId", "lastEventAt", "updatedAt")
       VALUES ($1, $2, 'pro', 'stripe', 'sub_123', 'cus_CUSTOMER_MARKER', 'active', '2026-02-05T00:00:00Z', $3, now(), now())`,
      [subscriptionId, owner.id, checkoutId],
    );
    await sql(
      `INSERT INTO "OAuthIdentity" (id, "userId", provider, "providerUserId", email) VALUES ($1, $2, 'github', 'GH_USER_MARKER', 'gh@example.com')`,
      [randomUUID(), owner.id],
    );
    await sql(
      `UPDATE "User" SET "emailVerifiedAt" = now(), "totpSecret" = 'TOTP_SECRET_MARKER' WHERE id = $1`,
      [owner.id],
    );
    await sql(
      `INSERT INTO "RecoveryCode" (id, "userId", "codeHash") VALUES ($1, $2, 'RECOVERY_MARKER')`,
      [randomUUID(), owner.id],
    );
    await sql(
      `INSERT INTO "EmailVerificationToken" (id, "userId", "tokenHash", email, "expiresAt") VALUES ($1, $2, 'VERIFY_MARKER', 'x@example.com', now() + interval '1 day')`,
      [randomUUID(), owner.id],
    );
    await sql(
      `INSERT INTO "PasswordResetToken" (id, "userId", "tokenHash", "expiresAt") VALUES ($1, $2, 'RESET_MARKER', now() + interval '1 hour')`,
      [randomUUID(), owner.id],
    );

    // Someone else's data, which must not appear.
    await t.http
      .post('/v1/skills')
      .set('Cookie', other.cookie)
      .send({ name: 'OTHER_SKILL_MARKER', instruction: 'x' })
      .expect(201);
    await chat(base, other.cookie, {
      model: 'local/echo',
      idempotencyKey: randomUUID(),
      messages: [{ role: 'user', content: 'OTHER_MESSAGE_MARKER' }],
    }).response;
    await t.http
      .post('/v1/files')
      .set('Cookie', other.cookie)
      .attach('file', Buffer.from('other file'), {
        filename: 'OTHER_FILE_MARKER.txt',
        contentType: 'text/plain',
      })
      .expect(201);

    const { res, text } = await exportOf(owner.cookie);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const doc = JSON.parse(text) as ExportDocument;
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="account-export-${doc.exportedAt.slice(0, 10)}.json"`,
    );
    expect(Object.keys(doc)).toEqual([
      'format',
      'exportedAt',
      'account',
      'memberships',
      'skills',
      'conversations',
      'files',
      'ledger',
      'creditGrants',
      'subscriptions',
      'checkouts',
    ]);
    expect(doc.format).toBe('chat-backend.account-export/1');

    // The account: what GET /v1/auth/me shows, as stored now, with the linked sign-in.
    const me = (
      await t.http.get('/v1/auth/me').set('Cookie', owner.cookie).expect(200)
    ).body;
    expect(doc.account).toEqual({
      id: owner.id,
      email: owner.email,
      role: 'user',
      plan: me.plan,
      createdAt: me.createdAt,
      emailVerified: true,
      twoFactorEnabled: false,
      identities: [
        {
          provider: 'github',
          email: 'gh@example.com',
          createdAt: expect.any(String),
        },
      ],
    });

    expect(doc.skills).toEqual([
      {
        id: skill.id,
        name: 'Summarizer',
        latestVersion: 2,
        createdAt: skill.created_at,
        updatedAt: expect.any(String),
        versions: [
          {
            id: expect.any(String),
            number: 1,
            instruction: 'Summarize v1.',
            inputSchema,
            outputSchema: null,
            createdAt: expect.any(String),
          },
          {
            id: expect.any(String),
            number: 2,
            instruction: 'Summarize v2.',
            inputSchema: null,
            outputSchema: { type: 'string' },
            createdAt: expect.any(String),
          },
        ],
      },
    ]);

    // Conversations: each as GET /v1/conversations/:id shows it, with every message in stored order.
    expect(doc.conversations.map((c) => c.id).sort()).toEqual(
      [chatConversationId, skillConversationId].sort(),
    );
    for (const exported of doc.conversations) {
      const shown = (
        await t.http
          .get(`/v1/conversations/${exported.id}`)
          .set('Cookie', owner.cookie)
          .expect(200)
      ).body;
      expect(exported).toEqual({
        id: shown.id,
        title: shown.title,
        skillId: shown.skillId,
        skillVersionId: shown.skillVersionId,
        createdAt: shown.createdAt,
        updatedAt: shown.updatedAt,
        archivedAt: shown.archived ? expect.any(String) : null,
        currentMessageId: shown.currentMessageId,
        messages: shown.messages.map((m: Record<string, unknown>) => ({
          id: m.id,
          parentId: m.parentId,
          role: m.role,
          content: m.content,
          createdAt: m.createdAt,
          toolCalls: m.toolCalls,
          feedback: m.feedback,
        })),
      });
    }
    const chatConversation = doc.conversations.find(
      (c) => c.id === chatConversationId,
    );
    expect(chatConversation?.archivedAt).toEqual(expect.any(String));
    expect(chatConversation?.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(
      chatConversation?.messages
        .map((m) => m.content)
        .filter((_, i) => i % 2 === 0),
    ).toEqual(['first turn', 'second turn']);
    expect(doc.conversations.find((c) => c.id === skillConversationId)).toEqual(
      expect.objectContaining({
        skillId: skill.id,
        skillVersionId: doc.skills[0].versions[1].id,
      }),
    );

    // The file record, and its content where contentUrl says.
    expect(doc.files).toEqual([
      {
        id: file.id,
        name: 'notes.txt',
        kind: 'text',
        mediaType: file.mediaType,
        sizeBytes: fileBytes.length,
        sha256: file.sha256,
        textStatus: 'pending',
        createdAt: file.createdAt,
        contentUrl: `/v1/files/${file.id}/content`,
      },
    ]);
    const content = await t.http
      .get(doc.files[0].contentUrl)
      .set('Cookie', owner.cookie)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(content.status).toBe(200);
    expect(
      createHash('sha256')
        .update(content.body as Buffer)
        .digest('hex'),
    ).toBe(doc.files[0].sha256);

    // The ledger: the runs as GET /v1/billing/usage lists them, and the grant.
    const usage = (
      await t.http
        .get('/v1/billing/usage')
        .query({ limit: 100 })
        .set('Cookie', owner.cookie)
        .expect(200)
    ).body.data as Record<string, unknown>[];
    expect(usage).toHaveLength(4);
    expect(byId(doc.ledger)).toEqual(
      byId(
        usage.map(({ model, ...entry }) => ({
          ...entry,
          modelId: model,
          creditGrantId: entry.kind === 'grant' ? grantId : null,
        })),
      ),
    );
    expect(
      doc.ledger.filter((entry) => entry.skillId === skill.id),
    ).toHaveLength(1);
    // The models asked for answered, with nothing read from a prompt cache.
    expect(
      doc.ledger.map(({ cachedInputTokens, requestedModelId }) => ({
        cachedInputTokens,
        requestedModelId,
      })),
    ).toEqual(Array(4).fill({ cachedInputTokens: 0, requestedModelId: null }));

    expect(doc.creditGrants).toEqual([
      {
        id: grantId,
        credits: 50,
        firstDay: '2026-01-01',
        lastDay: '2026-01-31',
        reason: 'goodwill',
        createdAt: expect.any(String),
      },
    ]);
    expect(doc.subscriptions).toEqual([
      {
        id: subscriptionId,
        planCode: 'pro',
        provider: 'stripe',
        providerSubscriptionId: 'sub_123',
        status: 'active',
        currentPeriodEnd: '2026-02-05T00:00:00.000Z',
        cancelAtPeriodEnd: false,
        canceledAt: null,
        checkoutId,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    ]);
    expect(doc.checkouts).toEqual([
      {
        id: checkoutId,
        planCode: 'pro',
        provider: 'stripe',
        status: 'completed',
        amount: 1900,
        currency: 'EUR',
        interval: 'month',
        createdAt: expect.any(String),
        completedAt: '2026-01-05T00:00:00.000Z',
      },
    ]);

    // No secret, storage key or provider handle, by value or by name; nothing of the other user.
    const [stored] = await sql<{ passwordHash: string }>(
      `SELECT "passwordHash" FROM "User" WHERE id = $1`,
      [owner.id],
    );
    const sessions = await sql<{ tokenHash: string }>(
      `SELECT "tokenHash" FROM "Session" WHERE "userId" = $1`,
      [owner.id],
    );
    const storageKeys = await sql<{ storageKey: string }>(
      `SELECT "storageKey" FROM "File" WHERE "ownerId" = $1`,
      [owner.id],
    );
    const forbidden = [
      stored.passwordHash,
      owner.cookie.split('=')[1],
      ...sessions.map((s) => s.tokenHash),
      ...storageKeys.map((f) => f.storageKey),
      'TOTP_SECRET_MARKER',
      'RECOVERY_MARKER',
      'VERIFY_MARKER',
      'RESET_MARKER',
      'cs_SESSION_MARKER',
      'URL_MARKER',
      'CUSTOMER_MARKER',
      'GH_USER_MARKER',
      other.id,
      other.email,
      'OTHER_SKILL_MARKER',
      'OTHER_MESSAGE_MARKER',
      'OTHER_FILE_MARKER',
      '"passwordHash"',
      '"totpSecret"',
      '"tokenHash"',
      '"codeHash"',
      '"storageKey"',
      '"adminId"',
      '"url"',
    ];
    expect(sessions.length).toBeGreaterThan(0);
    expect(forbidden.filter((value) => text.includes(value))).toEqual([]);
  }, 60_000);

  it('answers 401 problem+json without a session', async () => {
    const res = await t.http.get('/v1/auth/me/export').expect(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('unauthenticated');
    expect(res.headers['content-disposition']).toBeUndefined();
  });

  it('exports an empty account as a document with empty lists', async () => {
    const user = await registerUser(t.http);
    const doc = JSON.parse(
      (await exportOf(user.cookie)).text,
    ) as ExportDocument;
    expect(doc).toEqual(
      expect.objectContaining({
        skills: [],
        conversations: [],
        files: [],
        ledger: [],
        creditGrants: [],
        subscriptions: [],
        checkouts: [],
      }),
    );
    expect(doc.account.identities).toEqual([]);
  });

  it('exports a large account completely, as valid JSON, reading every list in pages of at most 200 rows', async () => {
    const user = await registerUser(t.http);
    const longId = await seedLongConversation(user.id, 3_000);
    // 450 more conversations of two messages and 1,000 ledger entries, each group sharing one createdAt (one
    // statement): the pages must continue on the id within equal times, without a gap or a repeat.
    await sql(
      `INSERT INTO "Conversation" (id, "userId", title, "updatedAt") SELECT gen_random_uuid(), $1, 'short ' || n, now() FROM generate_series(1, 450) AS n`,
      [user.id],
    );
    await sql(
      `INSERT INTO "Message" (id, "conversationId", role, content)
       SELECT gen_random_uuid(), c.id, r.role::"MessageRole", r.content FROM "Conversation" c
       CROSS JOIN (VALUES ('user', 'question'), ('assistant', 'answer')) AS r(role, content)
       WHERE c."userId" = $1 AND c.id <> $2`,
      [user.id, longId],
    );
    await sql(
      `INSERT INTO "LedgerEntry" (id, "userId", kind, status, "modelId", credits, "inputTokens", "outputTokens")
       SELECT gen_random_uuid(), $1, 'usage', 'completed', 'local/echo', 1, n, n FROM generate_series(1, 1000) AS n`,
      [user.id],
    );
    const repository = t.app.get(AccountExportRepository);
    const messagePages = jest.spyOn(repository, 'findMessagesPage');
    const conversationPages = jest.spyOn(repository, 'findConversationsPage');
    const ledgerPages = jest.spyOn(repository, 'findLedgerPage');

    const res = await download(base, '/v1/auth/me/export', user.cookie)
      .response;
    expect(res).toEqual(
      expect.objectContaining({ status: 200, complete: true }),
    );
    const doc = JSON.parse(res.body) as ExportDocument;

    expect(doc.conversations).toHaveLength(451);
    expect(new Set(doc.conversations.map((c) => c.id)).size).toBe(451);
    const long = doc.conversations.find((c) => c.id === longId);
    const storedOrder = await sql<{ id: string }>(
      `SELECT id FROM "Message" WHERE "conversationId" = $1 ORDER BY seq`,
      [longId],
    );
    expect(long?.messages.map((m) => m.id)).toEqual(
      storedOrder.map((m) => m.id),
    );
    expect(long?.messages.map((m) => String(m.content).split(' ')[1])).toEqual(
      Array.from({ length: 3_000 }, (_, i) => String(i + 1)),
    );
    for (const short of doc.conversations.filter((c) => c.id !== longId))
      expect(short.messages.map((m) => m.content)).toEqual([
        'question',
        'answer',
      ]);
    expect(doc.ledger).toHaveLength(1_000);
    expect(new Set(doc.ledger.map((entry) => entry.id)).size).toBe(1_000);

    for (const spy of [messagePages, conversationPages, ledgerPages]) {
      expect(spy.mock.calls.every((call) => call.at(-1) === 200)).toBe(true);
      for (const result of spy.mock.results)
        expect(((await result.value) as unknown[]).length).toBeLessThanOrEqual(
          200,
        );
    }
    // 3,000 messages are 15 full pages and an empty one; each short conversation one page.
    expect(
      messagePages.mock.calls.filter((call) => call[1] === longId),
    ).toHaveLength(16);
    expect(messagePages).toHaveBeenCalledTimes(16 + 450);
    expect(conversationPages).toHaveBeenCalledTimes(3);
    expect(ledgerPages).toHaveBeenCalledTimes(6);
  }, 120_000);

  it('stops reading the database once the client disconnects', async () => {
    const user = await registerUser(t.http);
    const conversationId = await seedLongConversation(user.id, 1_000);
    const repository = t.app.get(AccountExportRepository);
    const read = repository.findMessagesPage.bind(repository);
    const filePages = jest.spyOn(repository, 'findFilesPage');
    const call = download(base, '/v1/auth/me/export', user.cookie);
    const port = await call.localPort;
    const messagePages = jest
      .spyOn(repository, 'findMessagesPage')
      .mockImplementation(async (...args) => {
        if (messagePages.mock.calls.length === 2) {
          // The client leaves while the second page is read; the page comes back after the server saw it go.
          const socket = serverSockets.get(port);
          const closed = new Promise((resolve) =>
            socket?.once('close', resolve),
          );
          call.abort();
          await closed;
        }
        return read(...args);
      });
    await call.response.catch(() => undefined);
    await eventually(
      () =>
        t.logs.some(
          (line) =>
            line.msg ===
              'export download ended by the client; reading stopped' &&
            line.fileName !== undefined,
        ),
      10_000,
    );
    expect(messagePages).toHaveBeenCalledTimes(2);
    expect(
      messagePages.mock.calls.every((args) => args[1] === conversationId),
    ).toBe(true);
    expect(filePages).not.toHaveBeenCalled();
  });

  it('breaks the connection, never ending a truncated document cleanly, when a read fails after the first byte', async () => {
    const user = await registerUser(t.http);
    await seedLongConversation(user.id, 500);
    const repository = t.app.get(AccountExportRepository);
    const read = repository.findMessagesPage.bind(repository);
    const messagePages = jest
      .spyOn(repository, 'findMessagesPage')
      .mockImplementation(async (...args) => {
        if (messagePages.mock.calls.length === 2)
          throw new Error('connection to the database lost');
        return read(...args);
      });
    const res = await download(base, '/v1/auth/me/export', user.cookie)
      .response;
    expect(res.status).toBe(200);
    expect(res.complete).toBe(false);
    expect(res.body).toContain('"message 1 ');
    expect(() => JSON.parse(res.body)).toThrow();
    const requestId = res.headers['x-request-id'];
    expect(
      t.logs.some(
        (line) =>
          line.requestId === requestId &&
          line.level === 'error' &&
          line.msg ===
            'export failed after its first byte; connection destroyed',
      ),
    ).toBe(true);
  });

  it('answers a failure before the first byte with problem+json and no download headers', async () => {
    const user = await registerUser(t.http);
    jest
      .spyOn(t.app.get(AccountExportRepository), 'findAccount')
      .mockRejectedValue(new Error('boom'));
    const res = await t.http
      .get('/v1/auth/me/export')
      .set('Cookie', user.cookie)
      .expect(500);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('internal_error');
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.text).not.toContain('boom');
  });

  it('is documented in OpenAPI: a JSON attachment, 401 and 429', async () => {
    const doc = (await t.http.get('/docs-json').expect(200)).body;
    const operation = doc.paths['/v1/auth/me/export'].get;
    expect(operation.summary).toEqual(expect.any(String));
    expect(
      operation.responses['200'].content['application/json'].schema,
    ).toEqual({ $ref: '#/components/schemas/AccountExportDto' });
    expect(Object.keys(operation.responses['200'].headers)).toEqual([
      'Content-Disposition',
      'Cache-Control',
    ]);
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['401', '429']),
    );
    expect(operation.responses['429'].headers['Retry-After']).toBeDefined();
    expect(
      Object.keys(doc.components.schemas.AccountExportDto.properties),
    ).toEqual([
      'format',
      'exportedAt',
      'account',
      'memberships',
      'skills',
      'conversations',
      'files',
      'ledger',
      'creditGrants',
      'subscriptions',
      'checkouts',
    ]);
  });

  it('is limited to 5 exports per user per hour (429 with Retry-After)', async () => {
    const user = await registerUser(t.http);
    for (let i = 0; i < 5; i += 1)
      await t.http
        .get('/v1/auth/me/export')
        .set('Cookie', user.cookie)
        .expect(200);
    const limited = await t.http
      .get('/v1/auth/me/export')
      .set('Cookie', user.cookie)
      .expect(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Per user: someone else still can.
    const other = await registerUser(t.http);
    await t.http
      .get('/v1/auth/me/export')
      .set('Cookie', other.cookie)
      .expect(200);
  });
});
