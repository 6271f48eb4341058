import { randomUUID } from 'node:crypto';
import { ChangeFeed } from '../src/infra/database/change-feed';
import {
  registerUser,
  uniqueEmail,
  registerVerifiedUser,
} from './support/factories';
import { sql } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { bootTestApp, TestApp } from './support/test-app';

/**
 * A change takes effect on every instance once PostgreSQL delivers its notification, which takes
 * milliseconds (README). The test checks that it happens, not how fast: the bound only stops a test that
 * would otherwise wait forever, and holds on a loaded 2-core machine (timings are the benchmark's job).
 */
const BOUND_MS = 10_000;

async function within<T>(
  probe: () => T | Promise<T>,
  accept: (value: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((done) => setTimeout(done, 20));
  }
}

/**
 * Sessions (with their user) and the catalog are cached per instance. Two instances share the database:
 * whatever changes them, through either instance or by SQL, is seen by both within the bound.
 */
describe('cached sessions, users and catalog across instances', () => {
  const adminEmail = uniqueEmail('admin');
  let a: TestApp;
  let b: TestApp;
  let adminCookie: string;

  // The suite renames a plan and changes plans' models: on a database of its own, so other suites'
  // instances never see those rows.
  let database: ScratchDatabase;
  const db = <T = Record<string, unknown>>(query: string, values?: unknown[]) =>
    sql<T>(query, values, database.url);

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_cached_state');
    const env = { DATABASE_URL: database.url, ADMIN_EMAILS: adminEmail };
    [a, b] = [await bootTestApp(env), await bootTestApp(env)];
    adminCookie = (
      await registerVerifiedUser(a.http, {
        email: adminEmail,
        databaseUrl: database.url,
      })
    ).cookie;
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  const me = (t: TestApp, cookie: string) =>
    t.http.get('/v1/auth/me').set('Cookie', cookie);

  it('a logout on one instance ends the session on the other (cached there a moment before)', async () => {
    const user = await registerUser(a.http);
    expect((await me(b, user.cookie)).status).toBe(200);
    await a.http.post('/v1/auth/logout').set('Cookie', user.cookie).expect(204);
    expect((await me(a, user.cookie)).status).toBe(401);
    expect(
      (
        await within(
          () => me(b, user.cookie),
          (res) => res.status === 401,
        )
      ).status,
    ).toBe(401);
  });

  it('an account disabled by an admin is refused at once on the admin instance and within the bound on the other', async () => {
    const user = await registerUser(a.http);
    expect((await me(a, user.cookie)).status).toBe(200);
    expect((await me(b, user.cookie)).status).toBe(200);
    await a.http
      .post(`/v1/admin/users/${user.id}/disable`)
      .set('Cookie', adminCookie)
      .send({ reason: 'abuse' })
      .expect(200);
    expect((await me(a, user.cookie)).status).toBe(401);
    expect(
      (
        await within(
          () => me(b, user.cookie),
          (res) => res.status === 401,
        )
      ).status,
    ).toBe(401);
    const chat = await b.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'hi' }],
      });
    expect(chat.status).toBe(401);
  });

  it('a plan changed by an admin shows on both instances, and the new plan decides which models may run', async () => {
    const user = await registerUser(a.http);
    const claude = {
      model: 'anthropic/claude-haiku-4-5',
      messages: [{ role: 'user', content: 'hi' }],
    };
    expect(
      (
        await b.http
          .post('/v1/chat')
          .set('Cookie', user.cookie)
          .send({ ...claude, idempotencyKey: randomUUID() })
      ).body.code,
    ).toBe('model_not_allowed');
    await a.http
      .put(`/v1/admin/users/${user.id}/plan`)
      .set('Cookie', adminCookie)
      .send({ planCode: 'pro', reason: 'trial' })
      .expect(200);
    expect((await me(a, user.cookie)).body.plan).toEqual({
      code: 'pro',
      name: 'Pro',
    });
    expect(
      (
        await within(
          () => me(b, user.cookie),
          (res) => res.body.plan?.code === 'pro',
        )
      ).body.plan,
    ).toEqual({ code: 'pro', name: 'Pro' });
    // Pro includes Claude: the refusal is gone (the provider is not configured here: 503, not 403).
    expect(
      (
        await b.http
          .post('/v1/chat')
          .set('Cookie', user.cookie)
          .send({ ...claude, idempotencyKey: randomUUID() })
      ).body.code,
    ).toBe('provider_not_configured');
  });

  it("an operator's SQL (a plan downgrade, an email change, a deleted session) reaches both instances", async () => {
    const user = await registerUser(a.http);
    await a.http
      .put(`/v1/admin/users/${user.id}/plan`)
      .set('Cookie', adminCookie)
      .send({ planCode: 'team', reason: 'x' })
      .expect(200);
    expect((await me(a, user.cookie)).body.plan.code).toBe('team');
    expect((await me(b, user.cookie)).body.plan.code).toBe('team');
    const email = uniqueEmail('renamed');
    await db(
      `UPDATE "User" SET "planCode" = 'free', email = $2 WHERE id = $1`,
      [user.id, email],
    );
    for (const t of [a, b]) {
      const res = await within(
        () => me(t, user.cookie),
        (answer) => answer.body.plan?.code === 'free',
      );
      expect(res.body).toMatchObject({
        email,
        plan: { code: 'free', name: 'Free' },
      });
    }
    // Even when an instance's cache is stale, the database decides what a run may use.
    await db(`DELETE FROM "Session" WHERE "userId" = $1`, [user.id]);
    for (const t of [a, b])
      expect(
        (
          await within(
            () => me(t, user.cookie),
            (res) => res.status === 401,
          )
        ).status,
      ).toBe(401);
  });

  it('a catalog change by SQL shows in GET /v1/plans on both instances (new ETag), and a cached ETag gets 304 until then', async () => {
    const first = await b.http.get('/v1/plans').expect(200);
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"/);
    await b.http.get('/v1/plans').set('If-None-Match', etag).expect(304);
    const [{ name }] = await db<{ name: string }>(
      `SELECT name FROM "Plan" WHERE code = 'team'`,
    );
    try {
      await db(`UPDATE "Plan" SET name = 'Team (renamed)' WHERE code = 'team'`);
      for (const t of [a, b]) {
        const res = await within(
          () => t.http.get('/v1/plans'),
          (answer) =>
            answer.body.data?.some(
              (plan: { name: string }) => plan.name === 'Team (renamed)',
            ),
        );
        expect(
          res.body.data.map((plan: { name: string }) => plan.name),
        ).toContain('Team (renamed)');
        expect(res.headers.etag).not.toBe(etag);
      }
    } finally {
      await db(`UPDATE "Plan" SET name = $1 WHERE code = 'team'`, [name]);
    }
  });

  it('while an instance cannot hear the database it uses no cache, and picks the notifications up again', async () => {
    const user = await registerUser(a.http);
    expect((await me(b, user.cookie)).body.plan.code).toBe('free');
    const feed = b.app.get(ChangeFeed);
    // The backend of b's LISTEN connection, as PostgreSQL would show it to an operator.
    const pid = (feed as unknown as { client?: { processID?: number } }).client
      ?.processID;
    expect(pid).toEqual(expect.any(Number));
    await db(`SELECT pg_terminate_backend($1)`, [pid]);
    // Whatever b cached is dropped, and nothing is served from memory until the feed is back.
    await within(
      () => feed.live,
      (live) => !live,
    );
    await db(`UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`, [user.id]);
    expect((await me(b, user.cookie)).body.plan.code).toBe('pro');
    expect(
      await within(
        () => feed.live,
        (live) => live,
      ),
    ).toBe(true);
    await db(`UPDATE "User" SET "planCode" = 'team' WHERE id = $1`, [user.id]);
    expect(
      (
        await within(
          () => me(b, user.cookie),
          (res) => res.body.plan?.code === 'team',
        )
      ).body.plan.code,
    ).toBe('team');
  });
});
