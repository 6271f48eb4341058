import { randomUUID } from 'node:crypto';
import { chat, listen } from './support/chat-client';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

const echo = (content: string, idempotencyKey: string = randomUUID(), extra: Record<string, unknown> = {}) => ({
  model: 'local/echo',
  idempotencyKey,
  messages: [{ role: 'user', content }],
  ...extra,
});
const openai = (content: string, idempotencyKey: string = randomUUID(), extra: Record<string, unknown> = {}) => ({ ...echo(content, idempotencyKey, extra), model: 'openai/gpt-4o-mini' });

async function counts(userId: string) {
  const [row] = await sql<{ requests: number; ledger: number; used: number; reserved: number }>(
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
    t = await bootTestApp({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.baseUrl, ECHO_DELAY_MS: '2' });
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
    const conversation = await t.http.get(`/v1/conversations/${conversationId}`).set('Cookie', user.cookie).expect(200);
    expect(conversation.body.title).toBe('one two three');
    expect(conversation.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'one two three'],
      ['assistant', 'Echo: one two three'],
    ]);
    expect(await counts(user.id)).toEqual({ requests: 1, ledger: 1, used: 1, reserved: 0 });
    const usage = await t.http.get('/v1/billing/usage').set('Cookie', user.cookie).expect(200);
    expect(usage.body.data).toEqual([
      expect.objectContaining({ kind: 'usage', status: 'completed', model: 'local/echo', conversationId, inputTokens: 3, outputTokens: 4, credits: 1 }),
    ]);
  });
});
