import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../src/common/hashing';
import {
  registerUser,
  uniqueEmail,
  PASSWORD,
  registerVerifiedUser,
  verifyEmail,
} from './support/factories';
import { sql } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** Every route Express has under /v1/admin, read from the router: new routes are covered without editing this. */
function adminRoutes(t: TestApp): { method: string; path: string }[] {
  const stack = (
    t.app.getHttpAdapter().getInstance() as { router: { stack: RouteLayer[] } }
  ).router.stack;
  return stack
    .filter((layer) => layer.route?.path.startsWith('/v1/admin'))
    .flatMap((layer) =>
      Object.keys(layer.route!.methods)
        .filter((method) => method !== '_all')
        .map((method) => ({ method, path: layer.route!.path })),
    );
}

describe('admin: /v1/admin', () => {
  const rootEmail = uniqueEmail('root');
  let t: TestApp;
  let root: User;

  beforeAll(async () => {
    t = await bootTestApp({ ADMIN_EMAILS: rootEmail });
    root = await registerVerifiedUser(t.http, { email: rootEmail });
  });
  afterAll(() => t.close());

  const asRoot = () => ({
    get: (path: string) => t.http.get(path).set('Cookie', root.cookie),
  });
  const send = (
    method: 'put' | 'post',
    path: string,
    cookie: string,
    body: Record<string, unknown>,
  ) => t.http[method](path).set('Cookie', cookie).send(body);

  it('gives the admin role to a verified ADMIN_EMAILS address only, audited', async () => {
    expect(
      (await t.http.get('/v1/auth/me').set('Cookie', root.cookie).expect(200))
        .body.role,
    ).toBe('admin');
    const [entry] = (
      await asRoot().get(`/v1/admin/audit?targetId=${root.id}`).expect(200)
    ).body.data;
    expect(entry).toMatchObject({
      admin: null,
      action: 'user.role',
      after: { role: 'admin' },
      reason: 'ADMIN_EMAILS',
    });
    const user = await registerUser(t.http);
    expect(
      (await t.http.get('/v1/auth/me').set('Cookie', user.cookie).expect(200))
        .body.role,
    ).toBe('user');
  });

  it('refuses every admin route with 401 to anonymous callers and 403 to signed-in users, whatever they claim', async () => {
    const routes = adminRoutes(t);
    // The router and the OpenAPI document (built from the controllers) agree on the admin surface.
    const documented = Object.entries(
      (await t.http.get('/docs-json').expect(200)).body.paths as Record<
        string,
        Record<string, unknown>
      >,
    )
      .filter(([path]) => path.startsWith('/v1/admin'))
      .flatMap(([path, operations]) =>
        Object.keys(operations).map(
          (method) => `${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
        ),
      );
    expect(
      routes.map(({ method, path }) => `${method} ${path}`).sort(),
    ).toEqual(documented.sort());
    expect(routes.length).toBeGreaterThanOrEqual(17);
    for (const route of routes.filter(
      (candidate) => candidate.method === 'get',
    ))
      routes.push({ method: 'head', path: route.path });
    const user = await registerUser(t.http);
    for (const { method, path } of routes) {
      const url = path.replace(/:[A-Za-z]+/g, user.id);
      const call = (cookie?: string) => {
        const req = t.http[
          method as 'get' | 'post' | 'put' | 'patch' | 'delete'
        ](`${url}?role=admin`).set('X-Role', 'admin');
        const withCookie = cookie ? req.set('Cookie', cookie) : req;
        return method === 'head'
          ? withCookie
          : withCookie.send({
              role: 'admin',
              reason: 'x',
              planCode: 'enterprise',
            });
      };
      const anonymous = await call();
      expect([method, path, anonymous.status]).toEqual([method, path, 401]);
      const signedIn = await call(user.cookie);
      expect([method, path, signedIn.status]).toEqual([method, path, 403]);
      if (method !== 'head') expect(signedIn.body.code).toBe('forbidden');
    }
    expect(
      (await t.http.get('/v1/auth/me').set('Cookie', user.cookie)).body.plan
        .code,
    ).toBe('free');
  });

  it('lists accounts newest first, filtered by part of the email, page by page', async () => {
    const tag = `find${Date.now()}`;
    const found = [];
    for (let i = 0; i < 3; i += 1)
      found.push(
        await registerUser(t.http, { email: `${tag}-${i}@Example.com` }),
      );
    const first = await asRoot()
      .get(`/v1/admin/users?email=${tag.toUpperCase()}&limit=2`)
      .expect(200);
    expect(first.body.data.map((user: { id: string }) => user.id)).toEqual([
      found[2].id,
      found[1].id,
    ]);
    expect(first.body.data[0]).toMatchObject({
      role: 'user',
      plan: { code: 'free' },
      disabledAt: null,
    });
    const second = await asRoot()
      .get(
        `/v1/admin/users?email=${tag}&limit=2&cursor=${first.body.nextCursor}`,
      )
      .expect(200);
    expect(second.body).toEqual({
      data: [expect.objectContaining({ id: found[0].id })],
      nextCursor: null,
    });
    await asRoot().get('/v1/admin/users?limit=0').expect(400);
  });

  it('shows one account with plan, subscription, usage today and sessions; 404 for unknown ids', async () => {
    const user = await registerUser(t.http);
    const res = await asRoot().get(`/v1/admin/users/${user.id}`).expect(200);
    expect(res.body).toMatchObject({
      id: user.id,
      email: user.email,
      plan: { code: 'free' },
      subscription: { status: 'none', plan: { code: 'free' } },
      usageToday: { used: 0, reserved: 0, limit: expect.any(Number) },
      sessions: [
        expect.objectContaining({
          id: expect.any(String),
          expiresAt: expect.any(String),
        }),
      ],
    });
    await asRoot().get('/v1/admin/users/not-a-uuid').expect(404);
    await asRoot()
      .get('/v1/admin/users/00000000-0000-4000-8000-000000000000')
      .expect(404);
  });

  it('changes a plan with a reason: the user’s quota follows and the audit log records it', async () => {
    const user = await registerUser(t.http);
    const [team] = await sql<{ dailyCredits: number }>(
      'SELECT "dailyCredits" FROM "Plan" WHERE code = $1',
      ['team'],
    );
    const res = await send(
      'put',
      `/v1/admin/users/${user.id}/plan`,
      root.cookie,
      { planCode: 'team', reason: 'Sales deal #42' },
    ).expect(200);
    expect(res.body.plan.code).toBe('team');
    expect(
      (
        await t.http
          .get('/v1/billing/quota')
          .set('Cookie', user.cookie)
          .expect(200)
      ).body.limit,
    ).toBe(team.dailyCredits);

    const audit = await asRoot()
      .get(`/v1/admin/audit?targetId=${user.id}`)
      .expect(200);
    expect(audit.body.data[0]).toMatchObject({
      admin: { id: root.id, email: rootEmail },
      action: 'user.plan',
      targetType: 'user',
      targetId: user.id,
      before: { planCode: 'free' },
      after: { planCode: 'team' },
      reason: 'Sales deal #42',
    });

    const unknown = await send(
      'put',
      `/v1/admin/users/${user.id}/plan`,
      root.cookie,
      { planCode: 'platinum', reason: 'x' },
    ).expect(400);
    expect(unknown.body.errors).toEqual([
      expect.objectContaining({ field: 'planCode' }),
    ]);
    await send('put', `/v1/admin/users/${user.id}/plan`, root.cookie, {
      planCode: 'pro',
    }).expect(400);
    expect(
      (await t.http.get('/v1/auth/me').set('Cookie', user.cookie)).body.plan
        .code,
    ).toBe('team');
  });

  it('disables an account (its sessions end, sign-in refused, reset links void) and enables it again', async () => {
    const user = await registerUser(t.http);
    const resetToken = `reset-${randomUUID()}`;
    await sql(
      `INSERT INTO "PasswordResetToken" (id, "userId", "tokenHash", "expiresAt") VALUES (gen_random_uuid(), $1, $2, now() + interval '1 hour')`,
      [user.id, sha256Hex(resetToken)],
    );
    await send('post', `/v1/admin/users/${user.id}/disable`, root.cookie, {
      reason: 'Abuse report',
    }).expect(200);
    await t.http.get('/v1/auth/me').set('Cookie', user.cookie).expect(401);
    await t.http
      .post('/v1/auth/login')
      .send({ email: user.email, password: PASSWORD })
      .expect(401);
    expect(
      (await asRoot().get(`/v1/admin/users/${user.id}`)).body,
    ).toMatchObject({ disabledAt: expect.any(String), sessions: [] });

    const [{ at }] = await sql<{ at: string }>(
      'SELECT "disabledAt"::text AS at FROM "User" WHERE id = $1',
      [user.id],
    );
    await send('post', `/v1/admin/users/${user.id}/disable`, root.cookie, {
      reason: 'Again',
    }).expect(200);
    expect(
      (
        await sql<{ at: string }>(
          'SELECT "disabledAt"::text AS at FROM "User" WHERE id = $1',
          [user.id],
        )
      )[0].at,
    ).toBe(at);

    await t.http
      .post('/v1/auth/reset-password')
      .send({ token: resetToken, password: 'a brand new password 1' })
      .expect(400);

    await send('post', `/v1/admin/users/${user.id}/enable`, root.cookie, {
      reason: 'Appeal accepted',
    }).expect(200);
    await t.http
      .post('/v1/auth/reset-password')
      .send({ token: resetToken, password: 'a brand new password 1' })
      .expect(400);
    await t.http.get('/v1/auth/me').set('Cookie', user.cookie).expect(401);
    await t.http
      .post('/v1/auth/login')
      .send({ email: user.email, password: PASSWORD })
      .expect(200);
    const actions = (
      await asRoot().get(`/v1/admin/audit?targetId=${user.id}`)
    ).body.data.map((entry: { action: string }) => entry.action);
    expect(actions).toEqual(['user.enable', 'user.disable', 'user.disable']);
  });

  it('promotes and demotes admins, and never removes the last active admin', async () => {
    const second = await registerUser(t.http);
    await send('put', `/v1/admin/users/${second.id}/role`, root.cookie, {
      role: 'admin',
      reason: 'On-call',
    }).expect(200);
    await t.http
      .get('/v1/admin/users')
      .set('Cookie', second.cookie)
      .expect(200);
    await send('put', `/v1/admin/users/${second.id}/role`, root.cookie, {
      role: 'user',
      reason: 'Off-call',
    }).expect(200);
    await t.http
      .get('/v1/admin/users')
      .set('Cookie', second.cookie)
      .expect(403);
    await send('put', `/v1/admin/users/${second.id}/role`, root.cookie, {
      role: 'owner',
      reason: 'x',
    }).expect(400);
  });
});

describe('admin: the last admin', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(() => t.close());

  it('lets exactly one of two admins demoting each other at once succeed, and refuses removing the last one', async () => {
    // A database where these two are the only admins.
    const database = await createMigratedDatabase('chat_admin_roster');
    const app = await bootTestApp({ DATABASE_URL: database.url });
    try {
      const a = await registerUser(app.http);
      const b = await registerUser(app.http);
      await sql(
        `UPDATE "User" SET role = 'admin' WHERE id = ANY($1::uuid[])`,
        [[a.id, b.id]],
        database.url,
      );
      const [first, second] = await Promise.all([
        app.http
          .put(`/v1/admin/users/${b.id}/role`)
          .set('Cookie', a.cookie)
          .send({ role: 'user', reason: 'x' }),
        app.http
          .put(`/v1/admin/users/${a.id}/role`)
          .set('Cookie', b.cookie)
          .send({ role: 'user', reason: 'x' }),
      ]);
      // The loser is refused either by the roster check (409, when both passed the guard) or by the guard (403,
      // when the winner had already demoted it): never two successes.
      expect(
        [first.status, second.status].filter((status) => status === 200),
      ).toHaveLength(1);
      expect([403, 409]).toContain(
        [first.status, second.status].find((status) => status !== 200),
      );
      const [{ admins }] = await sql<{ admins: number }>(
        `SELECT count(*)::int AS admins FROM "User" WHERE role = 'admin'`,
        [],
        database.url,
      );
      expect(admins).toBe(1);
      const last = first.status === 200 ? a : b;
      const refused = await app.http
        .put(`/v1/admin/users/${last.id}/role`)
        .set('Cookie', last.cookie)
        .send({ role: 'user', reason: 'x' })
        .expect(409);
      expect(refused.body.code).toBe('last_admin');
      await app.http
        .post(`/v1/admin/users/${last.id}/disable`)
        .set('Cookie', last.cookie)
        .send({ reason: 'x' })
        .expect(409);
    } finally {
      await app.close();
      await database.drop();
    }
  });

  it('does not promote again, at start, a listed account an admin demoted', async () => {
    const email = uniqueEmail('listed');
    const first = await bootTestApp({ ADMIN_EMAILS: email });
    try {
      const listed = await registerVerifiedUser(first.http, { email });
      const other = await registerUser(first.http);
      await first.http
        .put(`/v1/admin/users/${other.id}/role`)
        .set('Cookie', listed.cookie)
        .send({ role: 'admin', reason: 'Second admin' })
        .expect(200);
      await first.http
        .put(`/v1/admin/users/${listed.id}/role`)
        .set('Cookie', other.cookie)
        .send({ role: 'user', reason: 'Left the company' })
        .expect(200);
      const restarted = await bootTestApp({ ADMIN_EMAILS: email });
      try {
        expect(
          (
            await restarted.http
              .get('/v1/auth/me')
              .set('Cookie', listed.cookie)
              .expect(200)
          ).body.role,
        ).toBe('user');
      } finally {
        await restarted.close();
      }
    } finally {
      await first.close();
    }
  });

  it('lets two admins disable each other at once without a deadlock: one wins', async () => {
    const database = await createMigratedDatabase('chat_admin_mutual');
    const app = await bootTestApp({ DATABASE_URL: database.url });
    try {
      const a = await registerUser(app.http);
      const b = await registerUser(app.http);
      const c = await registerUser(app.http);
      await sql(
        `UPDATE "User" SET role = 'admin' WHERE id = ANY($1::uuid[])`,
        [[a.id, b.id, c.id]],
        database.url,
      );
      const results = await Promise.all([
        app.http
          .post(`/v1/admin/users/${b.id}/disable`)
          .set('Cookie', a.cookie)
          .send({ reason: 'x' }),
        app.http
          .post(`/v1/admin/users/${a.id}/disable`)
          .set('Cookie', b.cookie)
          .send({ reason: 'x' }),
        app.http
          .post(`/v1/admin/users/${c.id}/credits`)
          .set('Cookie', a.cookie)
          .send({ credits: 5, reason: 'x' }),
        app.http
          .post(`/v1/admin/users/${a.id}/credits`)
          .set('Cookie', c.cookie)
          .send({ credits: 5, reason: 'x' }),
      ]);
      const statuses = results.map((res) => res.status);
      expect(statuses.filter((status) => status >= 500)).toEqual([]);
      expect(
        statuses.slice(0, 2).filter((status) => status === 200),
      ).toHaveLength(1);
    } finally {
      await app.close();
      await database.drop();
    }
  });

  it('does not promote, at start, a listed account whose email is not verified', async () => {
    const user = await registerUser(t.http);
    const restarted = await bootTestApp({ ADMIN_EMAILS: user.email });
    try {
      expect(
        (
          await restarted.http
            .get('/v1/auth/me')
            .set('Cookie', user.cookie)
            .expect(200)
        ).body.role,
      ).toBe('user');
      await verifyEmail(restarted.http, user);
      expect(
        (
          await restarted.http
            .get('/v1/auth/me')
            .set('Cookie', user.cookie)
            .expect(200)
        ).body.role,
      ).toBe('admin');
    } finally {
      await restarted.close();
    }
  });

  it('promotes accounts already registered (with a verified email) when their email is added to ADMIN_EMAILS, at start', async () => {
    const user = await registerVerifiedUser(t.http);
    const restarted = await bootTestApp({ ADMIN_EMAILS: user.email });
    try {
      expect(
        (
          await restarted.http
            .get('/v1/auth/me')
            .set('Cookie', user.cookie)
            .expect(200)
        ).body.role,
      ).toBe('admin');
      const [entry] = await sql<{
        action: string;
        reason: string;
        adminId: string | null;
      }>(
        'SELECT action, reason, "adminId" FROM "AuditLog" WHERE "targetId" = $1',
        [user.id],
      );
      expect(entry).toEqual({
        action: 'user.role',
        reason: 'ADMIN_EMAILS',
        adminId: null,
      });
    } finally {
      await restarted.close();
    }
  });
});
