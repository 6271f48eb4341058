import { randomBytes } from 'node:crypto';
import { Clock } from '../src/common/clock';
import { FakeOAuthProvider } from './support/fake-oauth';
import { registerUser, sessionCookie, uniqueEmail } from './support/factories';
import { sql } from './support/sql';
import { secretOfUri, totpCode } from './support/totp';
import { bootTestApp, TestApp } from './support/test-app';

const APP_URL = 'https://app.example.com';
const API_URL = 'https://api.example.com';

function cookiesOf(res: { headers: Record<string, unknown> }): string[] {
  return (res.headers['set-cookie'] as string[] | undefined) ?? [];
}

describe('OAuth sign-in', () => {
  let t: TestApp;
  let google: FakeOAuthProvider;
  let github: FakeOAuthProvider;
  beforeAll(async () => {
    google = await new FakeOAuthProvider('google').start();
    github = await new FakeOAuthProvider('github').start();
    t = await bootTestApp({
      APP_URL,
      API_URL,
      OAUTH_TIMEOUT_MS: '1500',
      ...google.env('GOOGLE'),
      ...github.env('GITHUB'),
    });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([google.close(), github.close()]);
  });

  const newId = () => String(randomBytes(4).readUInt32BE());

  /** Our redirect to the provider: its Location and the state cookie the browser keeps. */
  async function begin(provider: 'google' | 'github') {
    const res = await t.http.get(`/v1/auth/${provider}`).expect(302);
    const stateCookie = cookiesOf(res).find((cookie) =>
      cookie.startsWith(`oauth_${provider}=`),
    )!;
    return {
      location: res.headers.location,
      stateCookie,
      cookie: stateCookie.split(';')[0],
    };
  }

  async function signIn(
    provider: 'google' | 'github',
    fake: FakeOAuthProvider,
    account: { id: string; email: string | null; verified: boolean },
  ) {
    const { location, cookie } = await begin(provider);
    const code = fake.approve(location, account);
    const state = new URL(location).searchParams.get('state')!;
    return t.http
      .get(`/v1/auth/${provider}/callback`)
      .query({ code, state })
      .set('Cookie', cookie);
  }

  it('redirects to Google with state, PKCE S256 and the callback built from API_URL, binding the state to the browser', async () => {
    const { location, stateCookie } = await begin('google');
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe(`${google.baseUrl}/authorize`);
    expect(url.searchParams.get('redirect_uri')).toBe(
      `${API_URL}/v1/auth/google/callback`,
    );
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(
      /^[A-Za-z0-9_-]{43}$/,
    );
    expect(stateCookie).toMatch(/HttpOnly/);
    expect(stateCookie).toMatch(/Path=\/v1\/auth\/google/);
    expect(stateCookie).toMatch(/SameSite=Lax/);
  });

  it('signs in with Google: new account, session cookie, redirect into the app; the same identity finds the same account', async () => {
    const account = {
      id: newId(),
      email: uniqueEmail('google'),
      verified: true,
    };
    const first = await signIn('google', google, account);
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe(`${APP_URL}/`);
    const me = await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(first))
      .expect(200);
    expect(me.body.email).toBe(account.email);
    expect(google.tokenRequests.at(-1)?.get('code_verifier')).toMatch(
      /^[A-Za-z0-9_-]{43}$/,
    );

    const second = await signIn('google', google, {
      ...account,
      email: uniqueEmail('renamed'),
    });
    const again = await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(second))
      .expect(200);
    expect(again.body.id).toBe(me.body.id);
  });

  it('signs in with GitHub using the verified primary address from /user/emails', async () => {
    const account = {
      id: newId(),
      email: uniqueEmail('github'),
      verified: true,
    };
    const res = await signIn('github', github, account);
    expect(res.headers.location).toBe(`${APP_URL}/`);
    const me = await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(res))
      .expect(200);
    expect(me.body.email).toBe(account.email);
  });

  it('rejects a missing, wrong or foreign state with a redirect carrying an error, and creates no session', async () => {
    const { location, cookie } = await begin('google');
    const code = google.approve(location, {
      id: newId(),
      email: uniqueEmail(),
      verified: true,
    });
    const state = new URL(location).searchParams.get('state')!;
    const github = await begin('github');
    const attempts = [
      t.http
        .get('/v1/auth/google/callback')
        .query({
          code,
          state: `${state.slice(0, -1)}${state.endsWith('A') ? 'E' : 'A'}`,
        })
        .set('Cookie', cookie),
      t.http.get('/v1/auth/google/callback').query({ code, state }),
      t.http
        .get('/v1/auth/google/callback')
        .query({ code })
        .set('Cookie', cookie),
      t.http
        .get('/v1/auth/google/callback')
        .query({
          code,
          state: new URL(github.location).searchParams.get('state')!,
        })
        .set('Cookie', github.cookie.replace('oauth_github', 'oauth_google')),
      t.http
        .get('/v1/auth/google/callback')
        .query({ code, state })
        .set('Cookie', `${cookie.slice(0, -2)}xx`),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(
        `${APP_URL}/?error=oauth_state_invalid`,
      );
      expect(cookiesOf(res).some((c) => c.startsWith('sid='))).toBe(false);
    }
  });

  it('uses a state once: the same cookie and state with a new code start no second session, even at once', async () => {
    const account = {
      id: newId(),
      email: uniqueEmail('replay'),
      verified: true,
    };
    const { location, cookie } = await begin('google');
    const state = new URL(location).searchParams.get('state')!;
    const callback = (code: string) =>
      t.http
        .get('/v1/auth/google/callback')
        .query({ code, state })
        .set('Cookie', cookie);
    const first = await callback(google.approve(location, account));
    expect(first.headers.location).toBe(`${APP_URL}/`);
    const userId = (
      await t.http
        .get('/v1/auth/me')
        .set('Cookie', sessionCookie(first))
        .expect(200)
    ).body.id as string;
    const sessions = async () =>
      (await sql('SELECT 1 FROM "Session" WHERE "userId" = $1', [userId]))
        .length;
    expect(await sessions()).toBe(1);

    const replay = await callback(google.approve(location, account));
    expect(replay.headers.location).toBe(
      `${APP_URL}/?error=oauth_state_invalid`,
    );
    expect(cookiesOf(replay).some((c) => c.startsWith('sid='))).toBe(false);

    // Two callbacks racing with one fresh state: exactly one signs in.
    const next = await begin('google');
    const nextState = new URL(next.location).searchParams.get('state')!;
    const racing = await Promise.all(
      [0, 1].map(() =>
        t.http
          .get('/v1/auth/google/callback')
          .query({
            code: google.approve(next.location, account),
            state: nextState,
          })
          .set('Cookie', next.cookie),
      ),
    );
    expect(racing.map((res) => res.headers.location).sort()).toEqual([
      `${APP_URL}/`,
      `${APP_URL}/?error=oauth_state_invalid`,
    ]);
    expect(await sessions()).toBe(2);
  });

  it('links to an existing account only when the provider says the email is verified', async () => {
    const { email, id } = await registerUser(t.http);
    const unverified = await signIn('github', github, {
      id: newId(),
      email,
      verified: false,
    });
    expect(unverified.headers.location).toBe(
      `${APP_URL}/?error=oauth_email_unverified`,
    );
    expect(cookiesOf(unverified).some((c) => c.startsWith('sid='))).toBe(false);
    expect(
      await sql('SELECT 1 FROM "OAuthIdentity" WHERE "userId" = $1', [id]),
    ).toHaveLength(0);

    expect(
      (await sql('SELECT "emailVerifiedAt" FROM "User" WHERE id = $1', [id]))[0]
        .emailVerifiedAt,
    ).toBeNull();

    const verified = await signIn('google', google, {
      id: newId(),
      email,
      verified: true,
    });
    const me = await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(verified))
      .expect(200);
    expect(me.body).toMatchObject({ id, emailVerified: true });
  });

  it('creates accounts with the provider-verified email marked verified', async () => {
    const res = await signIn('github', github, {
      id: newId(),
      email: uniqueEmail('verified'),
      verified: true,
    });
    const me = await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(res))
      .expect(200);
    expect(me.body).toMatchObject({
      emailVerified: true,
      twoFactorEnabled: false,
    });
  });

  it('asks for the second factor after a provider sign-in when 2FA is on, through the same pending cookie', async () => {
    const account = {
      id: newId(),
      email: uniqueEmail('twofactor'),
      verified: true,
    };
    const first = sessionCookie(await signIn('google', google, account));
    const setup = await t.http
      .post('/v1/auth/2fa/setup')
      .set('Cookie', first)
      .expect(201);
    const secret = secretOfUri(setup.body.otpauthUri);
    const startedAt = Date.now();
    // The service's time stands still, so the two codes below are of known, consecutive steps.
    const clock = jest
      .spyOn(t.app.get(Clock), 'now')
      .mockReturnValue(new Date(startedAt));
    await t.http
      .post('/v1/auth/2fa/enable')
      .set('Cookie', first)
      .send({ code: totpCode(secret, startedAt, -1) })
      .expect(200);

    const again = await signIn('google', google, account);
    expect(again.status).toBe(302);
    expect(again.headers.location).toBe(`${APP_URL}/?two_factor=required`);
    expect(cookiesOf(again).some((c) => c.startsWith('sid='))).toBe(false);
    const pending = sessionCookie(again, 'sid_2fa');
    // The code of the current step is later than the one that turned 2FA on.
    const verified = await t.http
      .post('/v1/auth/2fa/verify')
      .set('Cookie', pending)
      .send({ code: totpCode(secret, startedAt) })
      .expect(200);
    expect(verified.body.email).toBe(account.email);
    await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(verified))
      .expect(200);
    clock.mockRestore();
  });

  it('hands a squatted account to the verified owner: the registrant password and sessions stop working', async () => {
    // Registration does not prove the email; someone registered the victim's address first.
    const {
      email,
      id,
      cookie: squatterCookie,
    } = await registerUser(t.http, { password: 'squatter password 1' });
    const owner = await signIn('google', google, {
      id: newId(),
      email,
      verified: true,
    });
    await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(owner))
      .expect(200);
    await t.http.get('/v1/auth/me').set('Cookie', squatterCookie).expect(401);
    await t.http
      .post('/v1/auth/login')
      .send({ email, password: 'squatter password 1' })
      .expect(401);
    expect(
      await sql('SELECT "passwordHash" FROM "User" WHERE id = $1', [id]),
    ).toEqual([{ passwordHash: null }]);
    // A later link of another verified provider to an account without a password voids nothing.
    const second = await signIn('github', github, {
      id: newId(),
      email,
      verified: true,
    });
    await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(owner))
      .expect(200);
    await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(second))
      .expect(200);
  });

  it('takes two-factor sign-in from the squatter too: the owner signs in at once, the squatter’s pending sign-in and codes are void', async () => {
    const squatter = await registerUser(t.http, {
      password: 'squatter password 2',
    });
    const startedAt = Date.now();
    const clock = jest
      .spyOn(t.app.get(Clock), 'now')
      .mockReturnValue(new Date(startedAt));
    try {
      const setup = await t.http
        .post('/v1/auth/2fa/setup')
        .set('Cookie', squatter.cookie)
        .expect(201);
      const secret = secretOfUri(setup.body.otpauthUri);
      await t.http
        .post('/v1/auth/2fa/enable')
        .set('Cookie', squatter.cookie)
        .send({ code: totpCode(secret, startedAt, -1) })
        .expect(200);
      // A sign-in left waiting for its second factor, to be finished after the owner arrives.
      const waiting = await t.http
        .post('/v1/auth/login')
        .send({ email: squatter.email, password: 'squatter password 2' })
        .expect(401);
      const pending = sessionCookie(waiting, 'sid_2fa');

      const owner = await signIn('google', google, {
        id: newId(),
        email: squatter.email,
        verified: true,
      });
      expect(owner.headers.location).not.toContain('two_factor');
      const me = await t.http
        .get('/v1/auth/me')
        .set('Cookie', sessionCookie(owner))
        .expect(200);
      expect(me.body).toMatchObject({
        emailVerified: true,
        twoFactorEnabled: false,
      });
      const late = await t.http
        .post('/v1/auth/2fa/verify')
        .set('Cookie', pending)
        .send({ code: totpCode(secret, startedAt) })
        .expect(401);
      expect(late.body.code).toBe('two_factor_challenge_invalid');
      expect(
        await sql('SELECT 1 FROM "RecoveryCode" WHERE "userId" = $1', [
          squatter.id,
        ]),
      ).toEqual([]);
      expect(
        await sql('SELECT "totpSecret" FROM "User" WHERE id = $1', [
          squatter.id,
        ]),
      ).toEqual([{ totpSecret: null }]);
    } finally {
      clock.mockRestore();
    }
  });

  it('links a provider to an account whose email was verified without voiding its password or sessions', async () => {
    const user = await registerUser(t.http, {
      password: 'verified owner password',
    });
    await sql('UPDATE "User" SET "emailVerifiedAt" = now() WHERE id = $1', [
      user.id,
    ]);
    const linked = await signIn('github', github, {
      id: newId(),
      email: user.email,
      verified: true,
    });
    await t.http
      .get('/v1/auth/me')
      .set('Cookie', sessionCookie(linked))
      .expect(200);
    await t.http.get('/v1/auth/me').set('Cookie', user.cookie).expect(200);
    await t.http
      .post('/v1/auth/login')
      .send({ email: user.email, password: 'verified owner password' })
      .expect(200);
  });

  it('redirects with an error when the user denies, the code exchange fails, or the account is disabled', async () => {
    const { location, cookie } = await begin('google');
    const state = new URL(location).searchParams.get('state')!;
    const denied = await t.http
      .get('/v1/auth/google/callback')
      .query({ error: 'access_denied', state })
      .set('Cookie', cookie);
    expect(denied.headers.location).toBe(`${APP_URL}/?error=oauth_denied`);
    const next = await begin('google');
    const badCode = await t.http
      .get('/v1/auth/google/callback')
      .query({
        code: 'forged',
        state: new URL(next.location).searchParams.get('state')!,
      })
      .set('Cookie', next.cookie);
    expect(badCode.headers.location).toBe(
      `${APP_URL}/?error=oauth_exchange_failed`,
    );

    const account = {
      id: newId(),
      email: uniqueEmail('disabled'),
      verified: true,
    };
    await signIn('google', google, account);
    await sql(`UPDATE "User" SET "disabledAt" = now() WHERE email = $1`, [
      account.email,
    ]);
    const disabled = await signIn('google', google, account);
    expect(disabled.headers.location).toBe(
      `${APP_URL}/?error=account_disabled`,
    );
    expect(cookiesOf(disabled).some((c) => c.startsWith('sid='))).toBe(false);
  });

  it('redirects with oauth_denied for any provider error, and for a callback without a code', async () => {
    const { location, cookie } = await begin('github');
    const state = new URL(location).searchParams.get('state')!;
    const failed = await t.http
      .get('/v1/auth/github/callback')
      .query({ error: 'server_error', error_description: 'down', state })
      .set('Cookie', cookie);
    expect(failed.headers.location).toBe(`${APP_URL}/?error=oauth_denied`);
    const bare = await t.http
      .get('/v1/auth/github/callback')
      .query({ state })
      .set('Cookie', cookie);
    expect(bare.headers.location).toBe(`${APP_URL}/?error=oauth_denied`);
    expect(cookiesOf(bare).some((c) => c.startsWith('sid='))).toBe(false);
  });

  it('answers 400 when a provider answer is sent to the start route instead of the callback', async () => {
    const res = await t.http
      .get('/v1/auth/google')
      .query({ code: 'x', state: 'y' });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.detail).toContain('/v1/auth/google/callback');
  });

  it('fails the sign-in, and only the sign-in, when a provider answers garbage or does not answer', async () => {
    const account = {
      id: newId(),
      email: uniqueEmail('faults'),
      verified: true,
    };
    const cases: [FakeOAuthProvider, 'google' | 'github', string, string][] = [
      [google, 'google', '/userinfo', 'null'],
      [google, 'google', '/userinfo', 'not json'],
      [github, 'github', '/user', '[]'],
      [github, 'github', '/user/emails', '{"length":1}'],
      [github, 'github', '/user', '{"login":"no-id"}'],
      [google, 'google', '/token', 'hang'],
      [github, 'github', '/user/emails', 'hang'],
    ];
    for (const [fake, provider, path, fault] of cases) {
      fake.faults.set(path, fault);
      try {
        const res = await signIn(provider, fake, account);
        expect({ path, fault, location: res.headers.location }).toEqual({
          path,
          fault,
          location: `${APP_URL}/?error=oauth_exchange_failed`,
        });
        expect(cookiesOf(res).some((c) => c.startsWith('sid='))).toBe(false);
      } finally {
        fake.faults.delete(path);
      }
    }
    // The process is alive and signs in as before.
    expect((await signIn('github', github, account)).headers.location).toBe(
      `${APP_URL}/`,
    );
  });

  it('answers 503 problem+json for a provider without credentials', async () => {
    const bare = await bootTestApp();
    try {
      for (const path of [
        '/v1/auth/google',
        '/v1/auth/github',
        '/v1/auth/github/callback?code=x&state=y',
      ]) {
        const res = await bare.http.get(path);
        expect(res.status).toBe(503);
        expect(res.headers['content-type']).toMatch(
          /^application\/problem\+json/,
        );
        expect(res.body.code).toBe('provider_not_configured');
      }
    } finally {
      await bare.close();
    }
  });
});
