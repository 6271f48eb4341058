import { randomBytes } from 'node:crypto';
import { FakeOAuthProvider } from './support/fake-oauth';
import { PASSWORD, registerUser, sessionCookie, uniqueEmail } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

const out: string[] = [];
const log = (...a: unknown[]) => out.push(a.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' '));

describe('probe', () => {
  let t: TestApp;
  let google: FakeOAuthProvider;
  let github: FakeOAuthProvider;
  beforeAll(async () => {
    google = await new FakeOAuthProvider('google').start();
    github = await new FakeOAuthProvider('github').start();
    t = await bootTestApp({ APP_URL: 'https://app.example.com', API_URL: 'https://api.example.com', ...google.env('GOOGLE'), ...github.env('GITHUB') });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([google.close(), github.close()]);
    require('fs').writeFileSync('/tmp/probe/out.txt', out.join('\n'));
  });

  it('odd bodies', async () => {
    const bodies: [string, string, unknown][] = [
      ['/v1/auth/login', 'json', []],
      ['/v1/auth/login', 'json', null],
      ['/v1/auth/login', 'json', 'x'],
      ['/v1/auth/login', 'json', 5],
      ['/v1/auth/login', 'json', { email: ['a@b.co'], password: PASSWORD }],
      ['/v1/auth/login', 'json', { email: { a: 1 }, password: PASSWORD }],
      ['/v1/auth/login', 'json', { email: 'a@b.co', password: ['x'] }],
      ['/v1/auth/login', 'json', { email: 'a@b.co', password: '\ud800'.repeat(20) }],
      ['/v1/auth/login', 'json', { email: '\ud800@b.co', password: 'x'.repeat(20) }],
      ['/v1/auth/login', 'json', { email: 'a@b.co', password: 'x'.repeat(5000) }],
      ['/v1/auth/login', 'json', { email: 'a'.repeat(300) + '@b.co', password: 'x' }],
      ['/v1/auth/register', 'json', { email: '\ud800x@b.co', password: PASSWORD }],
      ['/v1/auth/register', 'json', { email: 'x@b.co', password: '\ud800'.repeat(20) }],
      ['/v1/auth/register', 'json', { email: ['x@b.co'], password: PASSWORD }],
      ['/v1/auth/register', 'json', { email: 'a'.repeat(64) + '@' + ('b'.repeat(60) + '.').repeat(3) + 'com', password: PASSWORD }],
      ['/v1/auth/register', 'json', { email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`, password: PASSWORD }],
      ['/v1/auth/forgot-password', 'json', { email: 5 }],
      ['/v1/auth/forgot-password', 'json', { email: '\ud800' }],
      ['/v1/auth/forgot-password', 'json', {}],
      ['/v1/auth/reset-password', 'json', { token: 5, password: PASSWORD }],
      ['/v1/auth/reset-password', 'json', { token: '\ud800', password: PASSWORD }],
      ['/v1/auth/reset-password', 'json', { token: 'x', password: '\ud800'.repeat(13) }],
    ];
    for (const [path, , body] of bodies) {
      const res = await t.http.post(path).set('Content-Type', 'application/json').send(JSON.stringify(body));
      log(path, JSON.stringify(body).slice(0, 80), '->', res.status, res.body.code ?? res.body, res.body.errors?.map((e: any) => e.field + ':' + e.code));
    }
  });

  it('unicode email normalization', async () => {
    const composed = `\u00e4${randomBytes(3).toString('hex')}@example.com`;
    const decomposed = composed.normalize('NFD');
    const a = await t.http.post('/v1/auth/register').send({ email: composed, password: PASSWORD });
    const b = await t.http.post('/v1/auth/register').send({ email: decomposed, password: PASSWORD });
    log('NFC register', a.status, 'NFD register', b.status, a.body.email === b.body.email);
    const full = `ＡＢ${randomBytes(3).toString('hex')}@example.com`;
    const c = await t.http.post('/v1/auth/register').send({ email: full, password: PASSWORD });
    log('fullwidth register', c.status, c.body.email);
  });

  it('cross-site', async () => {
    const { cookie } = await registerUser(t.http);
    for (const origin of ['null', 'https://app.example.com.evil.com', 'HTTPS://APP.EXAMPLE.COM', 'https://app.example.com']) {
      const r = await t.http.post('/v1/auth/logout').set('Cookie', cookie).set('Origin', origin);
      log('origin', origin, r.status);
    }
    const r2 = await t.http.post('/V1/WEBHOOKS/../auth/logout').set('Cookie', cookie).set('Origin', 'https://evil.com');
    log('webhook path trick', r2.status, r2.body.code);
  });

  it('concurrent register', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all(Array.from({ length: 6 }, () => t.http.post('/v1/auth/register').send({ email, password: PASSWORD })));
    log('concurrent register', results.map((r) => r.status).join(','));
  });

  async function begin(provider: 'google' | 'github') {
    const res = await t.http.get(`/v1/auth/${provider}`).expect(302);
    const sc = ((res.headers['set-cookie'] as unknown as string[]) ?? []).find((c) => c.startsWith(`oauth_${provider}=`))!;
    return { location: res.headers.location as string, cookie: sc.split(';')[0] };
  }
  async function signIn(provider: 'google' | 'github', fake: FakeOAuthProvider, account: { id: string; email: string | null; verified: boolean }) {
    const { location, cookie } = await begin(provider);
    const code = fake.approve(location, account);
    const state = new URL(location).searchParams.get('state')!;
    return t.http.get(`/v1/auth/${provider}/callback`).query({ code, state }).set('Cookie', cookie);
  }

  it('concurrent oauth first sign-in', async () => {
    const account = { id: String(randomBytes(4).readUInt32BE()), email: uniqueEmail('oarace'), verified: true };
    const results = await Promise.all(Array.from({ length: 6 }, () => signIn('google', google, account)));
    log('concurrent oauth', results.map((r) => r.status + ' ' + r.headers.location).join(' | '));
    const rows = await sql('SELECT count(*)::int AS n FROM "User" WHERE email = $1', [account.email]);
    log('users', rows[0].n);
  });

  it('concurrent oauth first sign-in, existing account', async () => {
    const { email } = await registerUser(t.http);
    const account = { id: String(randomBytes(4).readUInt32BE()), email, verified: true };
    const results = await Promise.all(Array.from({ length: 6 }, () => signIn('github', github, account)));
    log('concurrent oauth link', results.map((r) => r.status + ' ' + r.headers.location).join(' | '));
  });

  it('pre-account hijack', async () => {
    const victim = uniqueEmail('victim');
    // attacker registers victim's address (no verification) and keeps the session
    const reg = await t.http.post('/v1/auth/register').send({ email: victim, password: 'attacker password 1' }).expect(201);
    const attackerCookie = sessionCookie(reg);
    // victim signs in with Google later
    const v = await signIn('google', google, { id: String(randomBytes(4).readUInt32BE()), email: victim, verified: true });
    log('victim google', v.status, v.headers.location);
    const me1 = await t.http.get('/v1/auth/me').set('Cookie', attackerCookie);
    const login = await t.http.post('/v1/auth/login').send({ email: victim, password: 'attacker password 1' });
    log('attacker old session after link', me1.status, 'attacker password login', login.status);
  });

  it('oauth odd queries', async () => {
    const { location, cookie } = await begin('google');
    const state = new URL(location).searchParams.get('state')!;
    for (const q of [`code=a&code=b&state=${state}`, `code=a&state=${state}&state=${state}`, `code=a&state=${state}&error=x&error=y`, `state[x]=1&code=a`]) {
      const r = await t.http.get(`/v1/auth/google/callback?${q}`).set('Cookie', cookie);
      log('callback', q.slice(0, 40), r.status, r.headers.location, r.body?.code);
    }
    const r = await t.http.get(`/v1/auth/google/callback?code=a&state=${state}`).set('Cookie', cookie.replace(/=.*/, '=%E0%A4%A'));
    log('bad cookie enc', r.status, r.headers.location);
  });

  it('cookie variants', async () => {
    const { cookie } = await registerUser(t.http);
    const tok = cookie.slice(4);
    for (const c of [`sid=garbage; ${cookie}`, `${cookie}; sid=garbage`, `sid="${tok}"`, `SID=${tok}`]) {
      const r = await t.http.get('/v1/auth/me').set('Cookie', c);
      log('cookie', c.slice(0, 20), r.status);
    }
  });
});
