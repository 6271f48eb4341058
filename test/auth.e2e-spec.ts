import { createHash } from 'node:crypto';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import {
  PASSWORD,
  registerUser,
  sessionCookie,
  uniqueEmail,
} from './support/factories';

describe('accounts and sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(() => t.close());

  describe('POST /v1/auth/register', () => {
    it('creates the account on the free plan, normalizes the email, signs in, never returns a hash', async () => {
      const email = uniqueEmail('Mixed');
      const res = await t.http
        .post('/v1/auth/register')
        .send({ email: `  ${email.toUpperCase()}  `, password: PASSWORD })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        email: email.toLowerCase(),
        role: 'user',
        plan: { code: 'free', name: 'Free' },
        emailVerified: false,
        twoFactorEnabled: false,
        createdAt: expect.any(String),
      });
      expect(JSON.stringify(res.body)).not.toMatch(/hash|\$2[aby]\$/);
      const me = await t.http
        .get('/v1/auth/me')
        .set('Cookie', sessionCookie(res))
        .expect(200);
      expect(me.body.email).toBe(email.toLowerCase());
      const [row] = await sql(
        'SELECT "passwordHash" FROM "User" WHERE email = $1',
        [email.toLowerCase()],
      );
      expect(row.passwordHash).toMatch(/^\$2[aby]\$12\$/);
    });

    it('answers 409 for an email already registered, whatever its case, and changes nothing', async () => {
      const { email } = await registerUser(t.http);
      const res = await t.http
        .post('/v1/auth/register')
        .send({ email: email.toUpperCase(), password: 'another password 123' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('email_taken');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(
        await sql('SELECT 1 FROM "User" WHERE email = $1', [email]),
      ).toHaveLength(1);
    });

    it('counts password length in characters: 64 emoji are fine, 11 or 129 characters are not', async () => {
      await t.http
        .post('/v1/auth/register')
        .send({ email: uniqueEmail(), password: '😀'.repeat(64) })
        .expect(201);
      await t.http
        .post('/v1/auth/register')
        .send({ email: uniqueEmail(), password: '😀'.repeat(128) })
        .expect(201);
      for (const password of [
        'x'.repeat(11),
        'x'.repeat(129),
        '😀'.repeat(129),
        12345678901234,
      ]) {
        const email = uniqueEmail();
        const res = await t.http
          .post('/v1/auth/register')
          .send({ email, password });
        expect(res.status).toBe(400);
        expect([
          ...new Set(res.body.errors.map((e: { field: string }) => e.field)),
        ]).toEqual(['password']);
        expect(
          await sql('SELECT 1 FROM "User" WHERE email = $1', [email]),
        ).toHaveLength(0);
      }
    });

    it('refuses whitespace-only and common breached passwords with a 400 saying why, creating nothing', async () => {
      const cases: [string, RegExp][] = [
        [' '.repeat(12), /only spaces/],
        ['\t \u00a0'.repeat(6), /only spaces/],
        ['1qaz2wsx3edc', /most common passwords/],
        ['QWERTYUIOP123', /most common passwords/],
      ];
      for (const [password, why] of cases) {
        const email = uniqueEmail();
        const res = await t.http
          .post('/v1/auth/register')
          .send({ email, password });
        expect({ password, status: res.status, code: res.body.code }).toEqual({
          password,
          status: 400,
          code: 'validation_failed',
        });
        expect(res.body.errors).toEqual([
          expect.objectContaining({
            field: 'password',
            message: expect.stringMatching(why),
          }),
        ]);
        expect(
          await sql('SELECT 1 FROM "User" WHERE email = $1', [email]),
        ).toHaveLength(0);
      }
    });

    it('treats composed and decomposed Unicode spellings of an email as one address', async () => {
      const local = `jos\u00e9-${Date.now()}`;
      await t.http
        .post('/v1/auth/register')
        .send({ email: `${local}@example.com`, password: PASSWORD })
        .expect(201);
      const decomposed = `${local.normalize('NFD')}@example.com`;
      expect(decomposed).not.toBe(`${local}@example.com`);
      const res = await t.http
        .post('/v1/auth/register')
        .send({ email: decomposed, password: PASSWORD });
      expect(res.status).toBe(409);
      await t.http
        .post('/v1/auth/login')
        .send({ email: decomposed, password: PASSWORD })
        .expect(200);
    });

    it('refuses an invalid email and unknown fields', async () => {
      const bad = await t.http
        .post('/v1/auth/register')
        .send({ email: 'not-an-email', password: PASSWORD });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].field).toBe('email');
      const extra = await t.http.post('/v1/auth/register').send({
        email: uniqueEmail(),
        password: PASSWORD,
        role: 'admin',
        plan: 'team',
      });
      expect(extra.status).toBe(400);
      expect(
        extra.body.errors.map((e: { field: string }) => e.field).sort(),
      ).toEqual(['plan', 'role']);
    });
  });

  describe('POST /v1/auth/login', () => {
    it('validates the body before passport-local runs: 400 naming the field; an empty password is the usual 401', async () => {
      const { email } = await registerUser(t.http);
      const cases: [object, string][] = [
        [{ email, password: 12345678901234 }, 'password'],
        [{ email: 42, password: PASSWORD }, 'email'],
        [{ password: PASSWORD }, 'email'],
        [{ email, password: PASSWORD, admin: true }, 'admin'],
      ];
      for (const [body, field] of cases) {
        const res = await t.http.post('/v1/auth/login').send(body);
        expect({ status: res.status, code: res.body.code }).toEqual({
          status: 400,
          code: 'validation_failed',
        });
        expect(
          res.body.errors.map((error: { field: string }) => error.field),
        ).toContain(field);
      }
      const empty = await t.http
        .post('/v1/auth/login')
        .send({ email, password: '' });
      expect({ status: empty.status, code: empty.body.code }).toEqual({
        status: 401,
        code: 'invalid_credentials',
      });
      // The email is normalised before passport-local looks the account up.
      await t.http
        .post('/v1/auth/login')
        .send({ email: `  ${email.toUpperCase()} `, password: PASSWORD })
        .expect(200);
    });

    it('sets an httpOnly, SameSite=Lax, Path=/ session cookie holding an opaque token stored only hashed', async () => {
      const { email } = await registerUser(t.http);
      const res = await t.http
        .post('/v1/auth/login')
        .send({ email, password: PASSWORD })
        .expect(200);
      const raw = (res.headers['set-cookie'] as unknown as string[])[0];
      expect(raw).toMatch(/^sid=[A-Za-z0-9_-]{43};/);
      expect(raw).toMatch(/; HttpOnly/);
      expect(raw).toMatch(/; SameSite=Lax/);
      expect(raw).toMatch(/; Path=\//);
      expect(raw).toMatch(/; Expires=/);
      expect(raw).not.toMatch(/; Secure/); // APP_URL is http here
      const token = sessionCookie(res).slice('sid='.length);
      const sessions = await sql(
        'SELECT "tokenHash", "expiresAt", "lastSeenAt" FROM "Session" s JOIN "User" u ON u.id = s."userId" WHERE u.email = $1',
        [email],
      );
      expect(sessions.map((s) => s.tokenHash)).not.toContain(token);
      expect(sessions.map((s) => s.tokenHash)).toContain(
        createHash('sha256').update(token).digest('hex'),
      );
      expect(res.body.email).toBe(email);
    });

    it('marks the cookie Secure when the app is served over https', async () => {
      const secure = await bootTestApp({ APP_URL: 'https://chat.example.com' });
      try {
        const { email } = await registerUser(secure.http);
        const res = await secure.http
          .post('/v1/auth/login')
          .send({ email, password: PASSWORD })
          .expect(200);
        expect((res.headers['set-cookie'] as unknown as string[])[0]).toMatch(
          /; Secure/,
        );
      } finally {
        await secure.close();
      }
    });

    it('answers an unknown email and a wrong password with the same 401 status, body and headers', async () => {
      const { email } = await registerUser(t.http);
      const wrongPassword = await t.http
        .post('/v1/auth/login')
        .send({ email, password: 'wrong password 123' });
      const unknownEmail = await t.http
        .post('/v1/auth/login')
        .send({ email: uniqueEmail('nobody'), password: 'wrong password 123' });
      for (const res of [wrongPassword, unknownEmail]) {
        expect(res.status).toBe(401);
        expect(res.headers['set-cookie']).toBeUndefined();
      }
      const strip = (body: Record<string, unknown>) => ({
        ...body,
        requestId: undefined,
      });
      expect(strip(wrongPassword.body)).toEqual(strip(unknownEmail.body));
      const headerNames = (res: { headers: Record<string, unknown> }) =>
        Object.keys(res.headers)
          .filter((name) => !['date', 'x-request-id', 'etag'].includes(name))
          .sort();
      expect(headerNames(wrongPassword)).toEqual(headerNames(unknownEmail));
    });

    it('spends about the same time on an unknown email as on a wrong password (one bcrypt each)', async () => {
      const { email } = await registerUser(t.http);
      const time = async (body: object) => {
        const started = process.hrtime.bigint();
        await t.http.post('/v1/auth/login').send(body).expect(401);
        return Number(process.hrtime.bigint() - started) / 1e6;
      };
      // Adjacent pairs, alternating which goes first, so load from other work on the machine hits both
      // sides of a pair alike; the median of the pair ratios ignores the pairs a burst of load distorted.
      const ratios: number[] = [];
      for (let i = 0; i < 9; i++) {
        const unknownFirst = i % 2 === 0;
        const first = await time(
          unknownFirst
            ? { email: uniqueEmail('nobody'), password: 'wrong password 123' }
            : { email, password: 'wrong password 123' },
        );
        const second = await time(
          unknownFirst
            ? { email, password: 'wrong password 123' }
            : { email: uniqueEmail('nobody'), password: 'wrong password 123' },
        );
        ratios.push(unknownFirst ? first / second : second / first);
      }
      const median = ratios.sort((a, b) => a - b)[
        Math.floor(ratios.length / 2)
      ];
      // Both run one bcrypt comparison at cost 12 (~200 ms): the ratio is about 1. Without the dummy
      // comparison an unknown email would answer in a few ms, a ratio near 0.02.
      expect(median).toBeGreaterThan(0.5);
      // 19 bcrypt rounds at cost 12: seconds alone, much longer on a machine shared with browser tests.
    }, 120_000);

    it('does not let two passwords sharing their first 72 bytes sign in for each other', async () => {
      const prefix = 'p'.repeat(72);
      const { email } = await registerUser(t.http, {
        password: `${prefix}-first`,
      });
      await t.http
        .post('/v1/auth/login')
        .send({ email, password: `${prefix}-second` })
        .expect(401);
      await t.http
        .post('/v1/auth/login')
        .send({ email, password: `${prefix}-first` })
        .expect(200);
    });
  });

  describe('sessions', () => {
    it('answers 401 problem+json on session endpoints without a valid session', async () => {
      for (const cookie of [
        undefined,
        'sid=garbage',
        `sid=${'A'.repeat(43)}`,
      ]) {
        const req = t.http.get('/v1/auth/me');
        const res = await (cookie ? req.set('Cookie', cookie) : req);
        expect(res.status).toBe(401);
        expect(res.headers['content-type']).toMatch(
          /^application\/problem\+json/,
        );
        expect(res.body.code).toBe('unauthenticated');
      }
      expect((await t.http.post('/v1/auth/logout')).status).toBe(401);
    });

    it('logout deletes the session, clears the cookie, and the old cookie then gets 401', async () => {
      const { cookie } = await registerUser(t.http);
      await t.http.get('/v1/auth/me').set('Cookie', cookie).expect(200);
      const out = await t.http
        .post('/v1/auth/logout')
        .set('Cookie', cookie)
        .expect(204);
      expect((out.headers['set-cookie'] as unknown as string[])[0]).toMatch(
        /^sid=;.*Expires=Thu, 01 Jan 1970/,
      );
      await t.http.get('/v1/auth/me').set('Cookie', cookie).expect(401);
      await t.http.post('/v1/auth/logout').set('Cookie', cookie).expect(401);
    });

    it('finds the real session cookie behind a junk one planted with the same name', async () => {
      const { cookie } = await registerUser(t.http);
      await t.http
        .get('/v1/auth/me')
        .set('Cookie', `sid=garbage; ${cookie}`)
        .expect(200);
    });

    it('refuses expired sessions', async () => {
      const { cookie, id } = await registerUser(t.http);
      await sql(
        `UPDATE "Session" SET "expiresAt" = now() - interval '1 second' WHERE "userId" = $1`,
        [id],
      );
      await t.http.get('/v1/auth/me').set('Cookie', cookie).expect(401);
    });

    it('stops a disabled user: existing sessions fail and sign-in is refused with the usual 401', async () => {
      const { cookie, email, id } = await registerUser(t.http);
      await sql(`UPDATE "User" SET "disabledAt" = now() WHERE id = $1`, [id]);
      await t.http.get('/v1/auth/me').set('Cookie', cookie).expect(401);
      const login = await t.http
        .post('/v1/auth/login')
        .send({ email, password: PASSWORD });
      expect(login.status).toBe(401);
      expect(login.body.code).toBe('invalid_credentials');
    });
  });

  describe('cross-site requests', () => {
    it('refuses unsafe requests from an origin that is not allowed, and changes nothing', async () => {
      const email = uniqueEmail();
      const res = await t.http
        .post('/v1/auth/register')
        .set('Origin', 'https://evil.example')
        .send({ email, password: PASSWORD });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('cross_site_request');
      expect(
        await sql('SELECT 1 FROM "User" WHERE email = $1', [email]),
      ).toHaveLength(0);
      const { cookie } = await registerUser(t.http);
      await t.http
        .post('/v1/auth/logout')
        .set('Cookie', cookie)
        .set('Sec-Fetch-Site', 'cross-site')
        .expect(403);
      await t.http.get('/v1/auth/me').set('Cookie', cookie).expect(200);
    });

    it('accepts unsafe requests from the allowed origin', async () => {
      await t.http
        .post('/v1/auth/register')
        .set('Origin', 'http://localhost:3000')
        .send({ email: uniqueEmail(), password: PASSWORD })
        .expect(201);
    });

    it('accepts a page of the service’s own origin (Sec-Fetch-Site: same-origin), whatever host reached it', async () => {
      await t.http
        .post('/v1/auth/register')
        .set('Origin', 'http://10.0.0.7:3000')
        .set('Sec-Fetch-Site', 'same-origin')
        .send({ email: uniqueEmail(), password: PASSWORD })
        .expect(201);
      const refused = await t.http
        .post('/v1/auth/register')
        .set('Origin', 'http://10.0.0.7:3000')
        .set('Sec-Fetch-Site', 'same-site')
        .send({ email: uniqueEmail(), password: PASSWORD })
        .expect(403);
      expect(refused.body.code).toBe('cross_site_request');
    });
  });
});
