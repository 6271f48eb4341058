import { randomUUID } from 'node:crypto';
import { FakeModelServer } from './support/fake-model-servers';
import {
  registerUser,
  registerVerifiedUser,
  uniqueEmail,
} from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;

/** Key values no response may ever show (the first is also echoed by the upstream's error message). */
const KEYS = ['sk-admin-visible-1', 'sk-admin-visible-2'];

interface ProviderKey {
  label: string;
  fingerprint: string;
  coolingDownUntil: string | null;
}

interface Provider {
  id: string;
  kind: string;
  configured: boolean;
  unavailableReason: string | null;
  models: string[];
  keys: ProviderKey[];
  health: {
    windowMinutes: number;
    calls: number;
    failures: number;
    cooldowns: number;
    firstTokenMs: number | null;
    lastFailure: { at: string; reason: string } | null;
  };
}

describe('admin: GET /v1/admin/providers', () => {
  const rootEmail = uniqueEmail('root');
  let fake: FakeModelServer;
  let t: TestApp;
  let root: User;
  let user: User;

  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    // Every call answers 429, in words that quote the key it was called with (as some upstreams do).
    fake.mode = {
      kind: 'http-error',
      status: 429,
      message: `Rate limit reached for key ${KEYS[0]} on requests per min`,
    };
    t = await bootTestApp({
      ADMIN_EMAILS: rootEmail,
      OPENAI_API_KEY: KEYS.join(','),
      OPENAI_BASE_URL: fake.baseUrl,
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_BASE_URL: undefined,
      // One call per run: the first key of the pool answers 429 and rests, the second is left untouched.
      PROVIDER_RETRIES: '0',
    });
    root = await registerVerifiedUser(t.http, { email: rootEmail });
    user = await registerUser(t.http);
    await t.http
      .put(`/v1/admin/users/${user.id}/plan`)
      .set('Cookie', root.cookie)
      .send({ planCode: 'pro', reason: 'Provider health test' })
      .expect(200);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  const providers = async (): Promise<{ data: Provider[]; text: string }> => {
    const res = await t.http
      .get('/v1/admin/providers')
      .set('Cookie', root.cookie)
      .expect(200);
    return { data: (res.body as { data: Provider[] }).data, text: res.text };
  };

  it('lists every catalog endpoint in catalog order, local first, with its models, before any call', async () => {
    const { data, text } = await providers();
    expect(data.map((endpoint) => endpoint.id)).toEqual([
      'local',
      'openai',
      'anthropic',
    ]);
    const [local, openai, anthropic] = data;
    expect(local).toEqual({
      id: 'local',
      kind: 'local',
      configured: true,
      unavailableReason: null,
      models: expect.arrayContaining(['local/echo']) as string[],
      keys: [{ label: 'none', fingerprint: 'none', coolingDownUntil: null }],
      health: expect.objectContaining({ windowMinutes: 15 }) as object,
    });
    expect(openai.models).toContain('openai/gpt-4o-mini');
    expect(openai.models).not.toContain('local/echo');
    expect(anthropic.models).toContain('anthropic/claude-haiku-4-5');
    expect(openai.keys.map((key) => key.coolingDownUntil)).toEqual([
      null,
      null,
    ]);
    expect(openai.health).toEqual({
      windowMinutes: 15,
      calls: 0,
      failures: 0,
      cooldowns: 0,
      firstTokenMs: null,
      lastFailure: null,
    });
    for (const key of KEYS) expect(text).not.toContain(key);
  });

  it('shows the key a 429 rested, the failed call in the health, and the unconfigured endpoint with its reason, never a key', async () => {
    const before = Date.now();
    const chat = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'openai/gpt-4o-mini',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'hello there' }],
      });
    expect(chat.status).not.toBe(200);
    expect(fake.requests.length).toBeGreaterThanOrEqual(1);
    expect(fake.requests[0].authorization).toBe(`Bearer ${KEYS[0]}`);

    const { data, text } = await providers();
    const openai = data.find((endpoint) => endpoint.id === 'openai')!;
    expect(openai).toMatchObject({
      kind: 'openai',
      configured: true,
      unavailableReason: null,
    });
    expect(openai.keys.map((key) => key.label)).toEqual([
      'OPENAI_API_KEY',
      'OPENAI_API_KEY#2',
    ]);
    for (const key of openai.keys)
      expect(key.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(openai.keys.map((key) => key.fingerprint)).size).toBe(2);
    const [first, second] = openai.keys;
    expect(first.coolingDownUntil).toEqual(expect.any(String));
    const until = Date.parse(first.coolingDownUntil!);
    expect(new Date(until).toISOString()).toBe(first.coolingDownUntil);
    // PROVIDER_KEY_COOLDOWN_MS (60 s by default): the upstream gave no Retry-After.
    expect(until).toBeGreaterThan(before + 30_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(second.coolingDownUntil).toBeNull();

    expect(openai.health.windowMinutes).toBe(15);
    expect(openai.health.calls).toBeGreaterThanOrEqual(1);
    expect(openai.health.failures).toBeGreaterThanOrEqual(1);
    expect(openai.health.cooldowns).toBeGreaterThanOrEqual(1);
    expect(openai.health.firstTokenMs).toBeNull();
    expect(openai.health.lastFailure).toEqual({
      at: expect.any(String) as string,
      reason: expect.stringContaining('HTTP 429') as string,
    });
    expect(openai.health.lastFailure!.reason).toContain('[redacted]');
    expect(Date.parse(openai.health.lastFailure!.at)).toBeGreaterThanOrEqual(
      before - 1_000,
    );

    const anthropic = data.find((endpoint) => endpoint.id === 'anthropic')!;
    expect(anthropic).toMatchObject({
      kind: 'anthropic',
      configured: false,
      keys: [],
    });
    expect(anthropic.unavailableReason).toEqual(
      expect.stringContaining('ANTHROPIC_API_KEY'),
    );
    expect(anthropic.health.calls).toBe(0);

    const local = data.find((endpoint) => endpoint.id === 'local')!;
    expect(local.health.calls).toBe(0);

    for (const key of KEYS) expect(text).not.toContain(key);
    expect(text).not.toContain('sk-admin-visible');
  });

  it('answers 401 signed out and 403 to a signed-in user who is not an admin', async () => {
    await t.http.get('/v1/admin/providers').expect(401);
    const refused = await t.http
      .get('/v1/admin/providers')
      .set('Cookie', user.cookie)
      .expect(403);
    expect(refused.body.code).toBe('forbidden');
    expect(refused.text).not.toContain('sk-admin-visible');
  });
});
