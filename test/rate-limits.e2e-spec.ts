import { randomBytes } from 'node:crypto';
import { PasswordHasher } from '../src/auth/password-hasher';
import { PASSWORD, registerUser, uniqueEmail } from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

const limits = {
  TRUST_PROXY: 'loopback',
  RATE_LIMIT_LOGIN_IP: '4/60',
  RATE_LIMIT_LOGIN_EMAIL: '3/60',
  RATE_LIMIT_REGISTER_IP: '2/60',
};

describe('rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp(limits);
  });
  afterAll(() => t.close());

  const ip = () =>
    `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const login = (
    app: TestApp,
    from: string,
    email: string,
    password = 'wrong password 123',
  ) =>
    app.http
      .post('/v1/auth/login')
      .set('X-Forwarded-For', from)
      .send({ email, password });

  it('blocks one email hammered from many IPs for that email only', async () => {
    const victim = uniqueEmail('victim');
    for (let i = 0; i < 3; i++)
      expect((await login(t, ip(), victim)).status).toBe(401);
    const blocked = await login(t, ip(), victim);
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(blocked.body.code).toBe('rate_limited');
    // The same (fresh) IPs can still try other emails.
    expect((await login(t, ip(), uniqueEmail('other'))).status).toBe(401);
  });

  it('blocks one IP trying many emails for that IP only', async () => {
    const attacker = ip();
    for (let i = 0; i < 4; i++)
      expect((await login(t, attacker, uniqueEmail())).status).toBe(401);
    expect((await login(t, attacker, uniqueEmail())).status).toBe(429);
    expect((await login(t, ip(), uniqueEmail())).status).toBe(401);
  });

  it('answers a blocked request identically whether the password is right, and never runs bcrypt', async () => {
    const { email } = await registerUser(t.http);
    const from = ip();
    for (let i = 0; i < 3; i++) await login(t, from, email);
    const verify = jest.spyOn(t.app.get(PasswordHasher), 'verify');
    const right = await login(t, from, email, PASSWORD);
    const wrong = await login(t, from, email);
    expect(verify).not.toHaveBeenCalled();
    verify.mockRestore();
    expect([right.status, wrong.status]).toEqual([429, 429]);
    expect({ ...right.body, requestId: undefined, detail: undefined }).toEqual({
      ...wrong.body,
      requestId: undefined,
      detail: undefined,
    });
    expect(right.headers['set-cookie']).toBeUndefined();
  });

  it('counts spellings of one email (case, spaces, Unicode form) against one limit', async () => {
    const local = `ren\u00e9-${randomBytes(3).toString('hex')}`;
    const spellings = [
      `${local}@example.com`,
      `  ${local.toUpperCase()}@EXAMPLE.com `,
      `${local.normalize('NFD')}@example.com`,
    ];
    for (const email of spellings)
      expect((await login(t, ip(), email)).status).toBe(401);
    expect((await login(t, ip(), spellings[0])).status).toBe(429);
  });

  it('counts an IPv6 client per /64, so rotating addresses inside it does not escape the limit', async () => {
    const prefix = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    for (let i = 1; i <= 4; i++)
      expect((await login(t, `${prefix}::${i}`, uniqueEmail())).status).toBe(
        401,
      );
    expect((await login(t, `${prefix}::99`, uniqueEmail())).status).toBe(429);
  });

  it('limits forgot-password per IP', async () => {
    const limited = await bootTestApp({
      ...limits,
      RATE_LIMIT_FORGOT_IP: '2/60',
    });
    try {
      const from = ip();
      for (let i = 0; i < 2; i++)
        await limited.http
          .post('/v1/auth/forgot-password')
          .set('X-Forwarded-For', from)
          .send({ email: uniqueEmail() })
          .expect(202);
      const blocked = await limited.http
        .post('/v1/auth/forgot-password')
        .set('X-Forwarded-For', from)
        .send({ email: uniqueEmail() });
      expect(blocked.status).toBe(429);
      await limited.http
        .post('/v1/auth/forgot-password')
        .set('X-Forwarded-For', ip())
        .send({ email: uniqueEmail() })
        .expect(202);
    } finally {
      await limited.close();
    }
  });

  it('limits registration per IP', async () => {
    const from = ip();
    for (let i = 0; i < 2; i++) {
      await t.http
        .post('/v1/auth/register')
        .set('X-Forwarded-For', from)
        .send({ email: uniqueEmail(), password: PASSWORD })
        .expect(201);
    }
    const blocked = await t.http
      .post('/v1/auth/register')
      .set('X-Forwarded-For', from)
      .send({ email: uniqueEmail(), password: PASSWORD });
    expect(blocked.status).toBe(429);
  });

  it('ignores X-Forwarded-For unless the proxy is configured (no bypass by a forged header)', async () => {
    const direct = await bootTestApp({ ...limits, TRUST_PROXY: undefined });
    try {
      for (let i = 0; i < 4; i++)
        expect((await login(direct, ip(), uniqueEmail())).status).toBe(401);
      // Every request came from 127.0.0.1 whatever the header said: the fifth is over the IP limit.
      expect((await login(direct, ip(), uniqueEmail())).status).toBe(429);
    } finally {
      await direct.close();
    }
  });

  it('enforces one limit across instances sharing Redis', async () => {
    const prefix = `test:shared:${randomBytes(6).toString('hex')}:`;
    const [a, b] = [
      await bootTestApp({ ...limits, REDIS_KEY_PREFIX: prefix }),
      await bootTestApp({ ...limits, REDIS_KEY_PREFIX: prefix }),
    ];
    try {
      const email = uniqueEmail('shared');
      expect((await login(a, ip(), email)).status).toBe(401);
      expect((await login(b, ip(), email)).status).toBe(401);
      expect((await login(a, ip(), email)).status).toBe(401);
      expect((await login(b, ip(), email)).status).toBe(429);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  describe('per signed-in user (runs, uploads, Skill writes)', () => {
    let u: TestApp;
    beforeAll(async () => {
      u = await bootTestApp({
        RATE_LIMIT_RUN_USER: '3/60',
        RATE_LIMIT_UPLOAD_USER: '2/60',
        RATE_LIMIT_SKILL_WRITE_USER: '2/60',
      });
    });
    afterAll(() => u.close());

    const expectLimited = (res: {
      status: number;
      headers: Record<string, string>;
      body: { code?: string };
    }) => {
      expect({ status: res.status, code: res.body.code }).toEqual({
        status: 429,
        code: 'rate_limited',
      });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['content-type']).toMatch(
        /^application\/problem\+json/,
      );
    };

    it('counts chat and Skill runs together per user, before validation, and leaves other users alone', async () => {
      const [alice, bob] = [
        await registerUser(u.http),
        await registerUser(u.http),
      ];
      const chat = (cookie: string, body: object) =>
        u.http.post('/v1/chat').set('Cookie', cookie).send(body);
      // Invalid bodies count too: the limit runs before validation, so it cannot be probed for free.
      expect((await chat(alice.cookie, { nonsense: true })).status).toBe(400);
      expect(
        (
          await chat(alice.cookie, {
            model: 'local/echo',
            idempotencyKey: 'k1',
            messages: [{ role: 'user', content: 'hi' }],
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await u.http
            .post('/v1/skills/00000000-0000-0000-0000-000000000000/run')
            .set('Cookie', alice.cookie)
            .send({})
        ).status,
      ).toBe(400);
      expectLimited(await chat(alice.cookie, { nonsense: true }));
      expectLimited(
        await u.http
          .post('/v1/skills/00000000-0000-0000-0000-000000000000/run')
          .set('Cookie', alice.cookie)
          .send({}),
      );
      expect(
        (
          await chat(bob.cookie, {
            model: 'local/echo',
            idempotencyKey: 'k1',
            messages: [{ role: 'user', content: 'hi' }],
          })
        ).status,
      ).toBe(200);
    });

    it('limits uploads and Skill creation or import per user', async () => {
      const user = await registerUser(u.http);
      const upload = () =>
        u.http
          .post('/v1/files')
          .set('Cookie', user.cookie)
          .attach('file', Buffer.from('hello'), 'a.txt');
      expect((await upload()).status).toBe(201);
      expect((await upload()).status).toBe(201);
      expectLimited(await upload());
      const create = () =>
        u.http
          .post('/v1/skills')
          .set('Cookie', user.cookie)
          .send({ name: 'S', instruction: 'I' });
      expect((await create()).status).toBe(201);
      expect(
        (
          await u.http
            .post('/v1/skills/import')
            .set('Cookie', user.cookie)
            .send({})
        ).status,
      ).toBe(400);
      expectLimited(await create());
    });

    it('does not count anonymous requests against anyone (they are refused with 401 first)', async () => {
      for (let i = 0; i < 5; i++)
        expect((await u.http.post('/v1/chat').send({})).status).toBe(401);
      const user = await registerUser(u.http);
      expect(
        (
          await u.http
            .post('/v1/chat')
            .set('Cookie', user.cookie)
            .send({ nonsense: true })
        ).status,
      ).toBe(400);
    });
  });
});
