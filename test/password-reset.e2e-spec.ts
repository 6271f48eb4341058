import { Clock } from '../src/common/clock';
import { PASSWORD, registerUser, uniqueEmail } from './support/factories';
import { resetTokenOf, startFakeSmtp } from './support/fake-smtp';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

/** Sign-up mails a verification link too; the reset tests read the reset mail. */
const RESET_SUBJECT = 'Reset your password';

const NEW_PASSWORD = 'a brand new password 42';

describe('password reset', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
  beforeAll(async () => {
    smtp = await startFakeSmtp();
    t = await bootTestApp({
      SMTP_URL: smtp.url,
      APP_URL: 'https://app.example.com',
    });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  async function requestToken(email: string): Promise<string> {
    await t.http.post('/v1/auth/forgot-password').send({ email }).expect(202);
    return resetTokenOf(await smtp.waitForMail(email, RESET_SUBJECT));
  }

  it('answers 202 with one fixed body whether or not the email exists, and mails only real accounts', async () => {
    const { email } = await registerUser(t.http);
    const nobody = uniqueEmail('nobody');
    const known = await t.http.post('/v1/auth/forgot-password').send({ email });
    const unknown = await t.http
      .post('/v1/auth/forgot-password')
      .send({ email: nobody });
    expect([known.status, unknown.status]).toEqual([202, 202]);
    expect(known.body).toEqual(unknown.body);
    expect(known.body).toEqual({
      message:
        'If an account exists for this email, a reset link is on its way.',
    });
    await smtp.waitForMail(email, RESET_SUBJECT);
    await new Promise((done) => setTimeout(done, 300));
    expect(smtp.mails.some((mail) => mail.to.includes(nobody))).toBe(false);
  });

  it('builds the link from APP_URL, never from the Host header, and stores only the token hash', async () => {
    const { email, id } = await registerUser(t.http);
    await t.http
      .post('/v1/auth/forgot-password')
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', 'evil.example')
      .send({ email })
      .expect(202);
    const mail = await smtp.waitForMail(email, RESET_SUBJECT);
    expect(mail.raw).toContain('https://app.example.com/reset-password?token=');
    expect(mail.raw).not.toContain('evil.example');
    const token = resetTokenOf(mail);
    const rows = await sql(
      'SELECT "tokenHash", EXTRACT(EPOCH FROM "expiresAt" - "createdAt")::float AS ttl FROM "PasswordResetToken" WHERE "userId" = $1',
      [id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].tokenHash).not.toBe(token);
    expect(rows[0].ttl).toBeGreaterThan(30 * 60 - 5);
    expect(rows[0].ttl).toBeLessThanOrEqual(30 * 60 + 1);
  });

  it('sets the new password, revokes every session, and the token works once', async () => {
    const { email, cookie } = await registerUser(t.http);
    const token = await requestToken(email);
    await t.http
      .post('/v1/auth/reset-password')
      .send({ token, password: NEW_PASSWORD })
      .expect(204);
    await t.http.get('/v1/auth/me').set('Cookie', cookie).expect(401);
    await t.http
      .post('/v1/auth/login')
      .send({ email, password: PASSWORD })
      .expect(401);
    await t.http
      .post('/v1/auth/login')
      .send({ email, password: NEW_PASSWORD })
      .expect(200);
    const again = await t.http
      .post('/v1/auth/reset-password')
      .send({ token, password: 'yet another password 7' });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_reset_token');
  });

  it('lets exactly one of two concurrent uses of a token succeed', async () => {
    const { email } = await registerUser(t.http);
    const token = await requestToken(email);
    const results = await Promise.all(
      ['first concurrent password', 'second concurrent password'].map(
        (password) =>
          t.http.post('/v1/auth/reset-password').send({ token, password }),
      ),
    );
    expect(results.map((res) => res.status).sort()).toEqual([204, 400]);
    const winner =
      results[0].status === 204
        ? 'first concurrent password'
        : 'second concurrent password';
    await t.http
      .post('/v1/auth/login')
      .send({ email, password: winner })
      .expect(200);
  });

  it('refuses a token after 30 minutes (clock moved) and an unknown one with the same code, changing nothing', async () => {
    const { email } = await registerUser(t.http);
    const token = await requestToken(email);
    const clock = jest
      .spyOn(t.app.get(Clock), 'now')
      .mockReturnValue(new Date(Date.now() + 30 * 60_000 + 1_000));
    const expired = await t.http
      .post('/v1/auth/reset-password')
      .send({ token, password: NEW_PASSWORD });
    clock.mockRestore();
    const unknown = await t.http
      .post('/v1/auth/reset-password')
      .send({ token: 'not-a-real-token', password: NEW_PASSWORD });
    expect([expired.status, unknown.status]).toEqual([400, 400]);
    expect(expired.body.code).toBe('invalid_reset_token');
    expect(unknown.body.code).toBe('invalid_reset_token');
    await t.http
      .post('/v1/auth/login')
      .send({ email, password: PASSWORD })
      .expect(200);
  });

  it('still accepts a token just before its 30 minutes are over', async () => {
    const { email } = await registerUser(t.http);
    const token = await requestToken(email);
    const clock = jest
      .spyOn(t.app.get(Clock), 'now')
      .mockReturnValue(new Date(Date.now() + 29 * 60_000));
    try {
      await t.http
        .post('/v1/auth/reset-password')
        .send({ token, password: NEW_PASSWORD })
        .expect(204);
    } finally {
      clock.mockRestore();
    }
  });

  it('validates the new password like registration does', async () => {
    for (const [password, why] of [
      ['short', /12 to 128/],
      [' '.repeat(16), /only spaces/],
      ['qwertyuiop123', /most common passwords/],
    ] as const) {
      const res = await t.http
        .post('/v1/auth/reset-password')
        .send({ token: 'x', password });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toEqual([
        expect.objectContaining({
          field: 'password',
          message: expect.stringMatching(why),
        }),
      ]);
    }
  });

  it('limits forgot-password per email and per IP', async () => {
    const limited = await bootTestApp({
      SMTP_URL: smtp.url,
      RATE_LIMIT_FORGOT_EMAIL: '2/60',
      RATE_LIMIT_RESET_IP: '1/60',
    });
    try {
      const email = uniqueEmail();
      await limited.http
        .post('/v1/auth/forgot-password')
        .send({ email })
        .expect(202);
      await limited.http
        .post('/v1/auth/forgot-password')
        .send({ email })
        .expect(202);
      const blocked = await limited.http
        .post('/v1/auth/forgot-password')
        .send({ email });
      expect(blocked.status).toBe(429);
      expect(blocked.headers['retry-after']).toBeDefined();
      await limited.http
        .post('/v1/auth/reset-password')
        .send({ token: 'x', password: NEW_PASSWORD })
        .expect(400);
      await limited.http
        .post('/v1/auth/reset-password')
        .send({ token: 'x', password: NEW_PASSWORD })
        .expect(429);
    } finally {
      await limited.close();
    }
  });

  it('without SMTP_URL writes the mail to the log (development)', async () => {
    const logOnly = await bootTestApp();
    try {
      const { email } = await registerUser(logOnly.http);
      await logOnly.http
        .post('/v1/auth/forgot-password')
        .send({ email })
        .expect(202);
      const { waitFor } = await import('./support/service-process');
      await waitFor(
        () => logOnly.rawLogs().includes('Reset your password'),
        10_000,
        () => 'no mail in the log',
      );
      const line = logOnly.logs.find(
        (entry) =>
          entry.msg ===
            'SMTP_URL is not set: mail written to the log instead of sent' &&
          JSON.stringify(entry).includes('Reset your password'),
      );
      expect(JSON.stringify(line)).toContain('/reset-password?token=');
    } finally {
      await logOnly.close();
    }
  });
});
