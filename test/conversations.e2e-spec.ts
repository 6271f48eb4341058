import { randomUUID } from 'node:crypto';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

/** Inserts a conversation of `userId` updated at `updatedAt`, with the given messages in order (one branch). */
async function seedConversation(userId: string, updatedAt: string, messages: [string, string][] = []): Promise<string> {
  const id = randomUUID();
  await sql(`INSERT INTO "Conversation" (id, "userId", title, "createdAt", "updatedAt") VALUES ($1, $2, $3, $4, $4)`, [id, userId, `title ${updatedAt}`, updatedAt]);
  let parentId: string | null = null;
  for (const [role, content] of messages) {
    const messageId = randomUUID();
    await sql(`INSERT INTO "Message" (id, "conversationId", "parentId", role, content) VALUES ($1, $2, $3, $4, $5)`, [messageId, id, parentId, role, content]);
    parentId = messageId;
  }
  await sql(`UPDATE "Conversation" SET "currentMessageId" = $2 WHERE id = $1`, [id, parentId]);
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
    const times = ['2026-01-01T10:00:00Z', '2026-01-03T10:00:00Z', '2026-01-02T10:00:00Z', '2026-01-04T10:00:00Z', '2026-01-04T10:00:00Z'];
    const ids = [];
    for (const time of times) ids.push(await seedConversation(owner.id, time));
    await seedConversation(other.id, '2026-01-05T10:00:00Z');

    const seen: { id: string; updatedAt: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await t.http.get('/v1/conversations').query({ limit: 2, ...(cursor ? { cursor } : {}) }).set('Cookie', owner.cookie).expect(200);
      const page = res.body as { data: { id: string; updatedAt: string }[]; nextCursor: string | null };
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
    const res = await t.http.get('/v1/conversations').set('Cookie', cookie).expect(200);
    expect(res.body).toEqual({ data: [], nextCursor: null });
  });

  it('refuses a bad limit or cursor with 400', async () => {
    const { cookie } = await registerUser(t.http);
    for (const query of [{ limit: 0 }, { limit: 101 }, { limit: 'ten' }, { cursor: 'garbage' }, { cursor: Buffer.from('x|y').toString('base64url') }, { sort: 'asc' }]) {
      const res = await t.http.get('/v1/conversations').query(query).set('Cookie', cookie);
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
    const res = await t.http.get(`/v1/conversations/${id}`).set('Cookie', cookie).expect(200);
    expect(res.body).toEqual(expect.objectContaining({ id, title: 'title 2026-02-01T00:00:00Z', skillId: null }));
    expect(res.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['system', 'Be brief.'],
      ['user', 'Hello'],
      ['assistant', 'Hi!'],
    ]);
  });

  it('answers another user’s conversation, an unknown id and a malformed id with the same 404', async () => {
    const owner = await registerUser(t.http);
    const stranger = await registerUser(t.http);
    const id = await seedConversation(owner.id, '2026-02-01T00:00:00Z', [['user', 'secret']]);
    const responses = await Promise.all(
      [id, randomUUID(), 'not-a-uuid'].map((target) => t.http.get(`/v1/conversations/${target}`).set('Cookie', stranger.cookie)),
    );
    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    const bodies = responses.map((res) => ({ ...res.body, requestId: undefined }));
    expect(bodies[0]).toEqual(bodies[1]);
    expect(bodies[0]).toEqual(bodies[2]);
    expect(JSON.stringify(bodies[0])).not.toContain('secret');
  });

  it('answers 401 without a session', async () => {
    await t.http.get('/v1/conversations').expect(401);
    await t.http.get(`/v1/conversations/${randomUUID()}`).expect(401);
  });
});
