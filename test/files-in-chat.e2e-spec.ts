import { randomUUID } from 'node:crypto';
import { eventually } from './support/eventually';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { buildPdf } from './support/pdf';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { sql as sqlOn } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

const MODEL = 'openai/gpt-4o-mini';

/**
 * On a database and storage of their own: this instance extracts only its files, not the slow or broken
 * ones other suites upload on purpose (the oldest pending file is taken first, one at a time).
 */
describe('files in chat and Skill runs', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let database: ScratchDatabase;
  let storageDir: string;
  const sql = <T = Record<string, unknown>>(
    query: string,
    values: unknown[] = [],
  ) => sqlOn<T>(query, values, database.url);
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    database = await createMigratedDatabase('chat_files_in_chat');
    storageDir = mkdtempSync(join(tmpdir(), 'files-in-chat-'));
    t = await bootTestApp({
      DATABASE_URL: database.url,
      STORAGE_DIR: storageDir,
      FILE_EXTRACTION_ENABLED: 'true',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await database.drop();
    rmSync(storageDir, { recursive: true, force: true });
  });

  /** A user with room for large prompts today (the free plan's 50 credits would not hold 2 MB of input). */
  async function userWithCredits() {
    const user = await registerUser(t.http);
    await sql(
      `INSERT INTO "CreditGrant" ("id", "userId", credits, "firstDay", "lastDay", reason) VALUES ($1, $2, 100000, now()::date, now()::date, 'test')`,
      [randomUUID(), user.id],
    );
    return user;
  }

  async function readyFile(
    cookie: string,
    content: Buffer,
    name: string,
  ): Promise<string> {
    const res = await t.http
      .post('/v1/files')
      .set('Cookie', cookie)
      .attach('file', content, name)
      .expect(201);
    await eventually(
      async () =>
        (await t.http.get(`/v1/files/${res.body.id}`).set('Cookie', cookie))
          .body.text.status === 'ready',
      20_000,
    );
    return res.body.id as string;
  }

  const chat = (cookie: string, body: Record<string, unknown>) =>
    t.http
      .post('/v1/chat')
      .set('Cookie', cookie)
      .send({
        model: MODEL,
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'What do the files say?' }],
        ...body,
      });

  /** The system message with the files the fake model received last. */
  const lastContext = () => {
    const messages = fake.requests.at(-1)!.messages as {
      role: string;
      content: string;
    }[];
    return (
      messages.find(
        (message) =>
          message.role === 'system' && message.content.includes('<file '),
      )?.content ?? null
    );
  };

  it('sends every attached file’s text, delimited and named, in the order attached', async () => {
    const user = await userWithCredits();
    const notes = await readyFile(
      user.cookie,
      Buffer.from('The launch code is tangerine.'),
      'notes.txt',
    );
    const report = await readyFile(
      user.cookie,
      buildPdf(['Quarterly revenue grew 12%.']),
      'report.pdf',
    );
    const res = await chat(user.cookie, { fileIds: [notes, report] });
    expect(res.status).toBe(200);
    expect(res.headers['x-context-files']).toBe(`${notes},${report}`);
    const context = lastContext()!;
    expect(context).toContain(
      `<file name="notes.txt" id="${notes}">\nThe launch code is tangerine.\n</file>`,
    );
    expect(context).toContain(
      `<file name="report.pdf" id="${report}">\nQuarterly revenue grew 12%.\n</file>`,
    );
    expect(context.indexOf(notes)).toBeLessThan(context.indexOf(report));
  });

  it('brings the one relevant part of a 2 MB file into a context that cannot hold it all', async () => {
    const user = await userWithCredits();
    const filler = (seed: number) =>
      Array.from(
        { length: 20 },
        (_, i) =>
          `Paragraph ${seed}-${i} talks about weather, trains and gardens in general terms.`,
      ).join(' ');
    const paragraphs: string[] = [];
    while (paragraphs.join('\n\n').length < 2 * 1024 * 1024)
      paragraphs.push(filler(paragraphs.length));
    paragraphs.splice(
      Math.floor(paragraphs.length / 2),
      0,
      'The lighthouse keeper of Vardø owns exactly seventeen zebrafish.',
    );
    const book = await readyFile(
      user.cookie,
      Buffer.from(paragraphs.join('\n\n')),
      'book.txt',
    );
    const res = await chat(user.cookie, {
      fileIds: [book],
      messages: [
        {
          role: 'user',
          content: 'How many zebrafish does the lighthouse keeper own?',
        },
      ],
    });
    expect(res.status).toBe(200);
    const context = lastContext()!;
    expect(context).toContain('exactly seventeen zebrafish');
    expect(context).toContain('Paragraph 0-0'); // the start of the file
    expect(context).toContain('[...]');
    expect(Buffer.byteLength(context)).toBeLessThan((2 * 1024 * 1024) / 2);
    // The reservation counts the attached text (about 3 bytes a token, 1 credit per 1k input tokens).
    const [run] = await sql<{ reservedCredits: number }>(
      `SELECT "reservedCredits" FROM "ChatRequest" WHERE "userId" = $1`,
      [user.id],
    );
    expect(run.reservedCredits).toBeGreaterThan(
      Buffer.byteLength(context) / 3 / 1000,
    );
  }, 60_000);

  it('refuses files that are not the caller’s (404), pending (409) or without text (422), billing nothing', async () => {
    const user = await userWithCredits();
    const other = await userWithCredits();
    const foreign = await readyFile(
      other.cookie,
      Buffer.from('not yours'),
      'foreign.txt',
    );
    const locked = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', buildPdf(['x'], { encrypted: true }), 'locked.pdf')
      .expect(201);
    await eventually(
      async () =>
        (
          await t.http
            .get(`/v1/files/${locked.body.id}`)
            .set('Cookie', user.cookie)
        ).body.text.status === 'failed',
      20_000,
    );
    const pending = (
      await sql<{ id: string }>(
        `INSERT INTO "File" (id, "ownerId", "storageKey", "originalName", kind, "mediaType", "sizeBytes", sha256, "textStatus", "textClaimedUntil")
       VALUES ($1, $2, $3, 'slow.txt', 'text', 'text/plain', 1, $4, 'pending', now() + interval '1 hour') RETURNING id::text`,
        [randomUUID(), user.id, `${user.id}/${randomUUID()}`, '0'.repeat(64)],
      )
    )[0].id;
    const calls = fake.requests.length;
    for (const [fileIds, status, code] of [
      [[foreign], 404, 'not_found'],
      [[randomUUID()], 404, 'not_found'],
      [['nope'], 404, 'not_found'],
      [[pending], 409, 'file_not_ready'],
      [[locked.body.id], 422, 'file_text_failed'],
    ] as const) {
      const res = await chat(user.cookie, { fileIds });
      expect({ fileIds, status: res.status, code: res.body.code }).toEqual({
        fileIds,
        status,
        code,
      });
    }
    for (const fileIds of [
      Array.from({ length: 11 }, () => randomUUID()),
      [foreign, foreign],
      'x',
      [1],
    ]) {
      expect((await chat(user.cookie, { fileIds })).status).toBe(400);
    }
    expect(fake.requests.length).toBe(calls);
    expect(
      await sql(`SELECT 1 FROM "LedgerEntry" WHERE "userId" = $1`, [user.id]),
    ).toHaveLength(0);
  });

  it('makes fileIds part of the idempotency fingerprint, and a replay names the same files', async () => {
    const user = await userWithCredits();
    const a = await readyFile(user.cookie, Buffer.from('file a'), 'a.txt');
    const b = await readyFile(user.cookie, Buffer.from('file b'), 'b.txt');
    const idempotencyKey = randomUUID();
    const first = await chat(user.cookie, { idempotencyKey, fileIds: [a] });
    expect(first.status).toBe(200);
    const calls = fake.requests.length;
    const replay = await chat(user.cookie, { idempotencyKey, fileIds: [a] });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['x-context-files']).toBe(a);
    expect(
      (await chat(user.cookie, { idempotencyKey, fileIds: [b] })).status,
    ).toBe(422);
    expect((await chat(user.cookie, { idempotencyKey })).status).toBe(422);
    expect(fake.requests.length).toBe(calls);
  });

  it('attaches files to Skill runs too', async () => {
    const user = await userWithCredits();
    const file = await readyFile(
      user.cookie,
      Buffer.from('Skill context here.'),
      'skill.txt',
    );
    const skill = await t.http
      .post('/v1/skills')
      .set('Cookie', user.cookie)
      .send({ name: 'Summarise', instruction: 'Summarise the files.' })
      .expect(201);
    const res = await t.http
      .post(`/v1/skills/${skill.body.id}/run`)
      .set('Cookie', user.cookie)
      .send({
        model: MODEL,
        idempotencyKey: randomUUID(),
        input: 'go',
        fileIds: [file],
      });
    expect(res.status).toBe(200);
    expect(res.headers['x-context-files']).toBe(file);
    expect(lastContext()).toContain('Skill context here.');
  });

  it('shows the attached files on the turn’s user message, and keeps them in the history after the file is deleted', async () => {
    const user = await userWithCredits();
    const file = await readyFile(
      user.cookie,
      Buffer.from('minutes of the meeting'),
      'minutes.txt',
    );
    const first = await chat(user.cookie, { fileIds: [file] });
    const conversationId = first.headers['x-conversation-id'];
    await chat(user.cookie, {
      conversationId,
      messages: [{ role: 'user', content: 'And without files?' }],
    });
    await t.http
      .delete(`/v1/files/${file}`)
      .set('Cookie', user.cookie)
      .expect(204);
    const conversation = (
      await t.http
        .get(`/v1/conversations/${conversationId}`)
        .set('Cookie', user.cookie)
        .expect(200)
    ).body;
    expect(
      conversation.messages.map(
        (message: { role: string; files: unknown[] }) => [
          message.role,
          message.files,
        ],
      ),
    ).toEqual([
      ['user', [{ id: file, name: 'minutes.txt', kind: 'text' }]],
      ['assistant', []],
      ['user', []],
      ['assistant', []],
    ]);
    expect(
      (await chat(user.cookie, { conversationId, fileIds: [file] })).status,
    ).toBe(404);
  });

  it('answers 413 when the conversation leaves no room in the context window for the files, billing nothing', async () => {
    const user = await userWithCredits();
    const file = await readyFile(
      user.cookie,
      Buffer.from('x'.repeat(5000)),
      'dense.txt',
    );
    // local/echo has a 32,000-token window: 90,000 bytes of messages (about 30,000 tokens) and its 2,048-token answer fill it.
    const filler = 'word '.repeat(18_000);
    const res = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        fileIds: [file],
        messages: [{ role: 'user', content: filler }],
      });
    expect({ status: res.status, code: res.body.code }).toEqual({
      status: 413,
      code: 'messages_too_large',
    });
    expect(
      await sql(`SELECT 1 FROM "ChatRequest" WHERE "userId" = $1`, [user.id]),
    ).toHaveLength(0);
  });

  it('matches file ids in any case, and treats an empty list as none', async () => {
    const user = await userWithCredits();
    const file = await readyFile(
      user.cookie,
      Buffer.from('case test'),
      'case.txt',
    );
    const upper = await chat(user.cookie, { fileIds: [file.toUpperCase()] });
    expect(upper.status).toBe(200);
    expect(upper.headers['x-context-files']).toBe(file);
    const idempotencyKey = randomUUID();
    expect((await chat(user.cookie, { idempotencyKey })).status).toBe(200);
    const same = await chat(user.cookie, { idempotencyKey, fileIds: [] });
    expect(same.headers['idempotent-replayed']).toBe('true');
  });
});
