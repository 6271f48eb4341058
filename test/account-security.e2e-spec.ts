import { randomUUID } from 'node:crypto';
import { Clock } from '../src/common/clock';
import { sha256Hex } from '../src/common/hashing';
import {
  PASSWORD,
  registerUser,
  registerVerifiedUser,
  sessionCookie,
  uniqueEmail,
} from './support/factories';
import { startFakeSmtp, verificationTokenOf } from './support/fake-smtp';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { secretOfUri, totpCode } from './support/totp';

const NEW_PASSWORD = 'a different correct horse';
const VERIFY_SUBJECT = 'Verify your email address';

function cookiesOf(res: { headers: Record<string, unknown> }): string[] {
  return (res.headers['set-cookie'] as string[] | undefined) ?? [];
}

describe('account security: password change, email verification, two-factor sign-in, sessions', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
  const adminEmail = uniqueEmail('listed-admin');
  const supportEmail = uniqueEmail('support');
  /** The service's clock, moved forward by tests that need fresh TOTP time steps. */
  let nowMs = Date.now();

  beforeAll(async () => {
    smtp = await startFakeSmtp();
    t = await bootTestApp({
      SMTP_URL: smtp.url,
      APP_URL: 'https://app.example.com',
      ADMIN_EMAILS: `${adminEmail},${supportEmail}`,
      RATE_LIMIT_PASSWORD_USER: '4/900',
      RATE_LIMIT_RESEND_VERIFICATION_USER: '2/3600',
      RATE_LIMIT_TWO_FACTOR_USER: '8/900',
    });
    jest
      .spyOn(t.app.get(Clock), 'now')
      .mockImplementation(() => new Date(nowMs));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  /** Moves the service's clock by a minute: the next TOTP code is of a later step than any used before. */
  function nextMinute(): number {
    nowMs += 60_000;
    return nowMs;
  }

  const login = (email: string, password = PASSWORD) =>
    t.http.post('/v1/auth/login').send({ email, password });
  const me = (cookie: string) =>
    t.http.get('/v1/auth/me').set('Cookie', cookie);

  describe('POST /v1/auth/change-password', () => {
    it('refuses a wrong current password and a weak new one, changing nothing', async () => {
      const user = await registerUser(t.http);
      const wrong = await t.http
        .post('/v1/auth/change-password')
        .set('Cookie', user.cookie)
        .send({
          currentPassword: 'not my password at all',
          newPassword: NEW_PASSWORD,
        })
        .expect(403);
      expect(wrong.body).toMatchObject({ code: 'password_incorrect' });
      const weak = await t.http
        .post('/v1/auth/change-password')
        .set('Cookie', user.cookie)
        .send({ currentPassword: PASSWORD, newPassword: 'short' })
        .expect(400);
      expect(weak.body.errors[0].field).toBe('newPassword');
      await login(user.email).expect(200);
      await login(user.email, NEW_PASSWORD).expect(401);
    });

    it('changes the password, ends every other session and keeps this one', async () => {
      const user = await registerUser(t.http);
      const other = sessionCookie(await login(user.email).expect(200));
      await t.http
        .post('/v1/auth/change-password')
        .set('Cookie', user.cookie)
        .send({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
        .expect(204);
      await me(user.cookie).expect(200);
      await me(other).expect(401);
      await login(user.email).expect(401);
      await login(user.email, NEW_PASSWORD).expect(200);
    });

    it('is rate-limited per account (429 with Retry-After)', async () => {
      const user = await registerUser(t.http);
      const statuses: number[] = [];
      let retryAfter: string | undefined;
      for (let attempt = 0; attempt < 5; attempt++) {
        const res = await t.http
          .post('/v1/auth/change-password')
          .set('Cookie', user.cookie)
          .send({
            currentPassword: `wrong password ${attempt}`,
            newPassword: NEW_PASSWORD,
          });
        statuses.push(res.status);
        retryAfter = res.headers['retry-after'];
      }
      expect(statuses).toEqual([403, 403, 403, 403, 429]);
      expect(Number(retryAfter)).toBeGreaterThan(0);
    });

    it('tells an account without a password how to set one', async () => {
      const user = await registerUser(t.http);
      await sql('UPDATE "User" SET "passwordHash" = NULL WHERE id = $1', [
        user.id,
      ]);
      const res = await t.http
        .post('/v1/auth/change-password')
        .set('Cookie', user.cookie)
        .send({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
        .expect(409);
      expect(res.body).toMatchObject({ code: 'no_password' });
    });
  });

  describe('email verification', () => {
    it('mails a single-use link at sign-up; following it verifies the account', async () => {
      const user = await registerUser(t.http);
      expect((await me(user.cookie).expect(200)).body.emailVerified).toBe(
        false,
      );
      const mail = await smtp.waitForMail(user.email, VERIFY_SUBJECT);
      expect(mail.raw.replace(/=\r?\n/g, '')).toContain(
        'https://app.example.com/verify-email?token=',
      );
      const token = verificationTokenOf(mail);
      const [stored] = await sql<{ tokenHash: string }>(
        'SELECT "tokenHash" FROM "EmailVerificationToken" WHERE "userId" = $1',
        [user.id],
      );
      expect(stored.tokenHash).not.toContain(token);

      await t.http.post('/v1/auth/verify-email').send({ token }).expect(204);
      expect((await me(user.cookie).expect(200)).body.emailVerified).toBe(true);
      const again = await t.http
        .post('/v1/auth/verify-email')
        .send({ token })
        .expect(400);
      expect(again.body).toMatchObject({ code: 'invalid_verification_token' });
      await t.http
        .post('/v1/auth/resend-verification')
        .set('Cookie', user.cookie)
        .expect(409);
    });

    it('refuses an expired, unknown or malformed token', async () => {
      const user = await registerUser(t.http);
      const token = verificationTokenOf(
        await smtp.waitForMail(user.email, VERIFY_SUBJECT),
      );
      // Expired a second ago as the service's clock tells time.
      await sql(
        `UPDATE "EmailVerificationToken" SET "expiresAt" = $2 WHERE "userId" = $1`,
        [user.id, new Date(nowMs - 1000)],
      );
      await t.http.post('/v1/auth/verify-email').send({ token }).expect(400);
      await t.http
        .post('/v1/auth/verify-email')
        .send({ token: 'x'.repeat(43) })
        .expect(400);
      const malformed = await t.http
        .post('/v1/auth/verify-email')
        .send({ token: 42 })
        .expect(400);
      expect(malformed.body.errors[0].field).toBe('token');
      expect((await me(user.cookie)).body.emailVerified).toBe(false);
    });

    it('resends a link on request, rate-limited per account', async () => {
      const user = await registerUser(t.http);
      await smtp.waitForMail(user.email, VERIFY_SUBJECT);
      await t.http
        .post('/v1/auth/resend-verification')
        .set('Cookie', user.cookie)
        .expect(202);
      await t.http
        .post('/v1/auth/resend-verification')
        .set('Cookie', user.cookie)
        .expect(202);
      const limited = await t.http
        .post('/v1/auth/resend-verification')
        .set('Cookie', user.cookie)
        .expect(429);
      expect(limited.headers['retry-after']).toBeDefined();
      const sent = () =>
        smtp.mails.filter(
          (mail) =>
            mail.to.includes(user.email) && mail.raw.includes(VERIFY_SUBJECT),
        ).length;
      const { waitFor } = await import('./support/service-process');
      await waitFor(
        () => sent() === 3,
        10_000,
        () => `${sent()} verification mails`,
      );
      // The newest link works; so does an older one that was not used yet.
      const tokens = smtp.mails
        .filter(
          (mail) =>
            mail.to.includes(user.email) && mail.raw.includes(VERIFY_SUBJECT),
        )
        .map(verificationTokenOf);
      await t.http
        .post('/v1/auth/verify-email')
        .send({ token: tokens[0] })
        .expect(204);
      // Verifying voids the others.
      await t.http
        .post('/v1/auth/verify-email')
        .send({ token: tokens[2] })
        .expect(400);
      await t.http.post('/v1/auth/resend-verification').expect(401);
    });

    it('gives an ADMIN_EMAILS address the admin role only once it is verified, audited', async () => {
      const listed = await registerUser(t.http, { email: adminEmail });
      expect((await me(listed.cookie)).body.role).toBe('user');
      await t.http
        .get('/v1/admin/users')
        .set('Cookie', listed.cookie)
        .expect(403);
      const token = verificationTokenOf(
        await smtp.waitForMail(adminEmail, VERIFY_SUBJECT),
      );
      await t.http.post('/v1/auth/verify-email').send({ token }).expect(204);
      expect((await me(listed.cookie)).body.role).toBe('admin');
      await t.http
        .get('/v1/admin/users')
        .set('Cookie', listed.cookie)
        .expect(200);
      const audit = await sql<{
        action: string;
        reason: string;
        adminId: string | null;
      }>(
        'SELECT action, reason, "adminId" FROM "AuditLog" WHERE "targetId" = $1',
        [listed.id],
      );
      expect(audit).toEqual([
        { action: 'user.role', reason: 'ADMIN_EMAILS', adminId: null },
      ]);
    });
  });

  describe('REQUIRE_EMAIL_VERIFICATION', () => {
    let strict: TestApp;
    beforeAll(async () => {
      strict = await bootTestApp({
        REQUIRE_EMAIL_VERIFICATION: 'true',
        ECHO_DELAY_MS: '0',
      });
    });
    afterAll(() => strict.close());

    it('refuses chat, Skill runs and checkout with 403 email_unverified until the email is verified, storing nothing', async () => {
      const user = await registerUser(strict.http);
      const idempotencyKey = randomUUID();
      const chat = await strict.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send({
          model: 'local/echo',
          idempotencyKey,
          messages: [{ role: 'user', content: 'hi' }],
        })
        .expect(403);
      expect(chat.body).toMatchObject({ code: 'email_unverified' });
      expect(chat.headers['content-type']).toContain(
        'application/problem+json',
      );
      const skill = await strict.http
        .post('/v1/skills')
        .set('Cookie', user.cookie)
        .send({ name: 'Echo', instruction: 'Repeat the text.' })
        .expect(201);
      const run = await strict.http
        .post(`/v1/skills/${skill.body.id}/run`)
        .set('Cookie', user.cookie)
        .send({ idempotencyKey: randomUUID(), input: {} })
        .expect(403);
      expect(run.body.code).toBe('email_unverified');
      const checkout = await strict.http
        .post('/v1/billing/checkout')
        .set('Cookie', user.cookie)
        .send({ planCode: 'pro', provider: 'stripe' })
        .expect(403);
      expect(checkout.body.code).toBe('email_unverified');
      expect(
        await sql('SELECT 1 FROM "ChatRequest" WHERE "userId" = $1', [user.id]),
      ).toEqual([]);

      const { verifyEmail } = await import('./support/factories');
      await verifyEmail(strict.http, user);
      const answered = await strict.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send({
          model: 'local/echo',
          idempotencyKey,
          messages: [{ role: 'user', content: 'hi' }],
        });
      expect(answered.status).toBe(200);
    });
  });

  describe('two-factor sign-in', () => {
    /** An account with 2FA on: its secret and recovery codes. */
    async function enrolled() {
      const user = await registerVerifiedUser(t.http);
      const setup = await t.http
        .post('/v1/auth/2fa/setup')
        .set('Cookie', user.cookie)
        .expect(201);
      const secret = secretOfUri(setup.body.otpauthUri);
      expect(setup.body.secret).toBe(secret);
      const enabled = await t.http
        .post('/v1/auth/2fa/enable')
        .set('Cookie', user.cookie)
        .send({ code: totpCode(secret, nowMs) })
        .expect(200);
      return {
        ...user,
        secret,
        recoveryCodes: enabled.body.recoveryCodes as string[],
      };
    }

    /** Password sign-in of a 2FA account: the pending cookie. */
    async function pendingSignIn(email: string): Promise<string> {
      const res = await login(email).expect(401);
      expect(res.body).toMatchObject({
        code: 'two_factor_required',
        next: '/v1/auth/2fa/verify',
      });
      expect(cookiesOf(res).some((cookie) => cookie.startsWith('sid='))).toBe(
        false,
      );
      const pending = cookiesOf(res).find((cookie) =>
        cookie.startsWith('sid_2fa='),
      );
      expect(pending).toMatch(/HttpOnly/);
      return pending!.split(';')[0];
    }

    const verify = (
      pending: string | undefined,
      body: Record<string, unknown>,
    ) => {
      const req = t.http.post('/v1/auth/2fa/verify');
      return (pending ? req.set('Cookie', pending) : req).send(body);
    };

    it('sets up with an otpauth URI, turns on with a code, and keeps the secret encrypted', async () => {
      const user = await registerVerifiedUser(t.http);
      const setup = await t.http
        .post('/v1/auth/2fa/setup')
        .set('Cookie', user.cookie)
        .expect(201);
      const uri = new URL(setup.body.otpauthUri);
      expect(uri.protocol).toBe('otpauth:');
      expect(decodeURIComponent(uri.pathname)).toContain(user.email);
      expect(uri.searchParams.get('issuer')).toBe('app.example.com');
      const wrong = await t.http
        .post('/v1/auth/2fa/enable')
        .set('Cookie', user.cookie)
        .send({
          code:
            '000000' === totpCode(setup.body.secret, nowMs)
              ? '111111'
              : '000000',
        })
        .expect(400);
      expect(wrong.body.code).toBe('invalid_two_factor_code');
      await t.http
        .post('/v1/auth/2fa/enable')
        .set('Cookie', user.cookie)
        .send({ code: 'abc' })
        .expect(400);
      expect(
        (
          await t.http
            .get('/v1/auth/2fa')
            .set('Cookie', user.cookie)
            .expect(200)
        ).body,
      ).toEqual({ enabled: false, recoveryCodesLeft: 0 });

      const enabled = await t.http
        .post('/v1/auth/2fa/enable')
        .set('Cookie', user.cookie)
        .send({ code: totpCode(setup.body.secret, nowMs) })
        .expect(200);
      expect(enabled.body.recoveryCodes).toHaveLength(10);
      expect(new Set(enabled.body.recoveryCodes).size).toBe(10);
      expect(
        (await t.http.get('/v1/auth/2fa').set('Cookie', user.cookie)).body,
      ).toEqual({ enabled: true, recoveryCodesLeft: 10 });
      expect((await me(user.cookie)).body.twoFactorEnabled).toBe(true);
      const [row] = await sql<{ totpSecret: string }>(
        'SELECT "totpSecret" FROM "User" WHERE id = $1',
        [user.id],
      );
      expect(row.totpSecret).not.toContain(setup.body.secret);
      const stored = await sql<{ codeHash: string }>(
        'SELECT "codeHash" FROM "RecoveryCode" WHERE "userId" = $1',
        [user.id],
      );
      expect(stored).toHaveLength(10);
      for (const code of enabled.body.recoveryCodes as string[])
        expect(stored.map((entry) => entry.codeHash).join()).not.toContain(
          code.replace('-', ''),
        );
      await t.http
        .post('/v1/auth/2fa/setup')
        .set('Cookie', user.cookie)
        .expect(409);
    });

    it('asks for the second factor at sign-in and completes it with a fresh code, never with a used one', async () => {
      const user = await enrolled();
      const pending = await pendingSignIn(user.email);
      // The code that turned 2FA on was spent then.
      const replayed = await verify(pending, {
        code: totpCode(user.secret, nowMs),
      }).expect(400);
      expect(replayed.body.code).toBe('invalid_two_factor_code');
      const at = nextMinute();
      const signedIn = await verify(pending, {
        code: totpCode(user.secret, at),
      }).expect(200);
      expect(signedIn.body).toMatchObject({
        id: user.id,
        twoFactorEnabled: true,
      });
      expect(
        cookiesOf(signedIn).some((cookie) => cookie.startsWith('sid_2fa=;')),
      ).toBe(true);
      await me(sessionCookie(signedIn)).expect(200);
      // The pending sign-in is spent, and the same code does not open a second one.
      await verify(pending, { code: totpCode(user.secret, at) }).expect(401);
      const second = await pendingSignIn(user.email);
      await verify(second, { code: totpCode(user.secret, at) }).expect(400);
    });

    it('accepts each recovery code once', async () => {
      const user = await enrolled();
      const [first] = user.recoveryCodes;
      const signedIn = await verify(await pendingSignIn(user.email), {
        recoveryCode: first.toUpperCase(),
      }).expect(200);
      await me(sessionCookie(signedIn)).expect(200);
      await verify(await pendingSignIn(user.email), {
        recoveryCode: first,
      }).expect(400);
      expect(
        (await t.http.get('/v1/auth/2fa').set('Cookie', user.cookie)).body
          .recoveryCodesLeft,
      ).toBe(9);
    });

    it('needs the pending cookie, exactly one factor, and voids a pending sign-in after five wrong codes', async () => {
      const user = await enrolled();
      const none = await verify(undefined, {
        code: totpCode(user.secret, nextMinute()),
      }).expect(401);
      expect(none.body.code).toBe('two_factor_challenge_invalid');
      const pending = await pendingSignIn(user.email);
      const both = await verify(pending, {
        code: '123456',
        recoveryCode: user.recoveryCodes[0],
      }).expect(400);
      expect(both.body.code).toBe('validation_failed');
      await verify(pending, {}).expect(400);
      const fresh = totpCode(user.secret, nowMs);
      const wrong = fresh === '000000' ? '111111' : '000000';
      for (let attempt = 0; attempt < 5; attempt++)
        await verify(pending, { code: wrong }).expect(400);
      const voided = await verify(pending, { code: fresh }).expect(401);
      expect(voided.body.code).toBe('two_factor_challenge_invalid');
    });

    it('limits code checks per account across sign-ins (429 with Retry-After)', async () => {
      const user = await enrolled();
      const wrong =
        totpCode(user.secret, nowMs) === '000000' ? '111111' : '000000';
      const statuses: number[] = [];
      for (let round = 0; round < 2; round++) {
        const pending = await pendingSignIn(user.email);
        for (let attempt = 0; attempt < 4; attempt++)
          statuses.push((await verify(pending, { code: wrong })).status);
      }
      // enable took one check of the eight allowed.
      expect(statuses).toEqual([400, 400, 400, 400, 400, 400, 400, 429]);
      const limited = await verify(await pendingSignIn(user.email), {
        code: totpCode(user.secret, nextMinute()),
      }).expect(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('turns on from a session signed in more than 10 minutes ago only with the password', async () => {
      const user = await registerVerifiedUser(t.http);
      const setup = await t.http
        .post('/v1/auth/2fa/setup')
        .set('Cookie', user.cookie)
        .expect(201);
      // Sessions are stamped by the database's clock: the service's is moved 11 minutes past it, then back
      // (later tests' new sessions would otherwise look old too).
      const before = nowMs;
      nowMs += 11 * 60_000;
      try {
        const code = totpCode(setup.body.secret, nowMs);
        const missing = await t.http
          .post('/v1/auth/2fa/enable')
          .set('Cookie', user.cookie)
          .send({ code })
          .expect(403);
        expect(missing.body.code).toBe('password_incorrect');
        await t.http
          .post('/v1/auth/2fa/enable')
          .set('Cookie', user.cookie)
          .send({ code, password: 'not the password' })
          .expect(403);
        expect((await me(user.cookie)).body.twoFactorEnabled).toBe(false);
        await t.http
          .post('/v1/auth/2fa/enable')
          .set('Cookie', user.cookie)
          .send({ code, password: PASSWORD })
          .expect(200);
        expect((await me(user.cookie)).body.twoFactorEnabled).toBe(true);
      } finally {
        nowMs = before;
      }
    });

    it('voids a pending sign-in when the password is reset', async () => {
      const user = await enrolled();
      const pending = await pendingSignIn(user.email);
      const token = `reset-${randomUUID()}`;
      await sql(
        'INSERT INTO "PasswordResetToken" (id, "userId", "tokenHash", "expiresAt") VALUES ($1, $2, $3, now() + interval \'1 hour\')',
        [randomUUID(), user.id, sha256Hex(token)],
      );
      await t.http
        .post('/v1/auth/reset-password')
        .send({ token, password: NEW_PASSWORD })
        .expect(204);
      const voided = await verify(pending, {
        code: totpCode(user.secret, nextMinute()),
      }).expect(401);
      expect(voided.body.code).toBe('two_factor_challenge_invalid');
      expect(
        await sql('SELECT 1 FROM "TwoFactorChallenge" WHERE "userId" = $1', [
          user.id,
        ]),
      ).toEqual([]);
    });

    it('turns off with the password and a code; sign-in is one step again', async () => {
      const user = await enrolled();
      const code = totpCode(user.secret, nextMinute());
      await t.http
        .post('/v1/auth/2fa/disable')
        .set('Cookie', user.cookie)
        .send({ password: 'not the password', code })
        .expect(403);
      await t.http
        .post('/v1/auth/2fa/disable')
        .set('Cookie', user.cookie)
        .send({ password: PASSWORD })
        .expect(400);
      await t.http
        .post('/v1/auth/2fa/disable')
        .set('Cookie', user.cookie)
        .send({ password: PASSWORD, code })
        .expect(204);
      expect((await me(user.cookie)).body.twoFactorEnabled).toBe(false);
      expect(
        await sql('SELECT 1 FROM "RecoveryCode" WHERE "userId" = $1', [
          user.id,
        ]),
      ).toEqual([]);
      await login(user.email).expect(200);
      await t.http
        .post('/v1/auth/2fa/disable')
        .set('Cookie', user.cookie)
        .send({ password: PASSWORD, code })
        .expect(409);
    });
  });

  describe('admin', () => {
    it('turns 2FA off for an owner who lost the authenticator, audited; shows verification and 2FA state', async () => {
      const support = await registerVerifiedUser(t.http, {
        email: supportEmail,
      });
      const user = await registerVerifiedUser(t.http);
      const setup = await t.http
        .post('/v1/auth/2fa/setup')
        .set('Cookie', user.cookie)
        .expect(201);
      await t.http
        .post('/v1/auth/2fa/enable')
        .set('Cookie', user.cookie)
        .send({ code: totpCode(secretOfUri(setup.body.otpauthUri), nowMs) })
        .expect(200);
      const before = await t.http
        .get(`/v1/admin/users/${user.id}`)
        .set('Cookie', support.cookie)
        .expect(200);
      expect(before.body).toMatchObject({
        emailVerified: true,
        twoFactorEnabled: true,
      });
      await t.http
        .post(`/v1/admin/users/${user.id}/two-factor/reset`)
        .set('Cookie', user.cookie)
        .send({ reason: 'x' })
        .expect(403);
      await t.http
        .post(`/v1/admin/users/${user.id}/two-factor/reset`)
        .set('Cookie', support.cookie)
        .send({})
        .expect(400);
      const reset = await t.http
        .post(`/v1/admin/users/${user.id}/two-factor/reset`)
        .set('Cookie', support.cookie)
        .send({ reason: 'Lost phone, identity checked by ticket #7' })
        .expect(200);
      expect(reset.body.twoFactorEnabled).toBe(false);
      expect(
        await sql('SELECT 1 FROM "RecoveryCode" WHERE "userId" = $1', [
          user.id,
        ]),
      ).toEqual([]);
      await login(user.email).expect(200);
      const audit = await sql<{
        action: string;
        reason: string;
        adminId: string;
      }>(
        'SELECT action, reason, "adminId"::text AS "adminId" FROM "AuditLog" WHERE "targetId" = $1',
        [user.id],
      );
      expect(audit).toEqual([
        {
          action: 'user.two_factor_reset',
          reason: 'Lost phone, identity checked by ticket #7',
          adminId: support.id,
        },
      ]);
    });
  });

  describe('sessions', () => {
    it('lists the account’s sessions with the current one marked, and ends one', async () => {
      const user = await registerUser(t.http);
      const phone = sessionCookie(
        await login(user.email)
          .set('User-Agent', 'PhoneBrowser/1.0')
          .expect(200),
      );
      const listed = await t.http
        .get('/v1/auth/sessions')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(listed.body.items).toHaveLength(2);
      const current = listed.body.items.find(
        (session: { current: boolean }) => session.current,
      );
      const other = listed.body.items.find(
        (session: { current: boolean }) => !session.current,
      );
      expect(other).toMatchObject({
        userAgent: 'PhoneBrowser/1.0',
        ip: expect.any(String),
        createdAt: expect.any(String),
        lastSeenAt: expect.any(String),
      });
      expect(JSON.stringify(listed.body)).not.toMatch(/token/i);

      const stranger = await registerUser(t.http);
      await t.http
        .delete(`/v1/auth/sessions/${other.id}`)
        .set('Cookie', stranger.cookie)
        .expect(404);
      await t.http
        .delete('/v1/auth/sessions/not-a-uuid')
        .set('Cookie', user.cookie)
        .expect(404);
      await me(phone).expect(200);

      await t.http
        .delete(`/v1/auth/sessions/${other.id}`)
        .set('Cookie', user.cookie)
        .expect(204);
      await me(phone).expect(401);
      await t.http
        .delete(`/v1/auth/sessions/${other.id}`)
        .set('Cookie', user.cookie)
        .expect(404);
      const ended = await t.http
        .delete(`/v1/auth/sessions/${current.id}`)
        .set('Cookie', user.cookie)
        .expect(204);
      expect(
        cookiesOf(ended).some((cookie) => cookie.startsWith('sid=;')),
      ).toBe(true);
      await me(user.cookie).expect(401);
    });
  });
});
