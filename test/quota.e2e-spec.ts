import { Clock } from '../src/common/clock';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

describe('GET /v1/billing/quota', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  const at = (iso: string) =>
    jest.spyOn(t.app.get(Clock), 'now').mockReturnValue(new Date(iso));

  it('gives a new account its plan credits, nothing used, and the next UTC midnight', async () => {
    const { cookie } = await registerUser(t.http);
    at('2026-11-22T15:30:00Z');
    const res = await t.http
      .get('/v1/billing/quota')
      .set('Cookie', cookie)
      .expect(200);
    expect(res.body).toEqual({
      limit: 50,
      used: 0,
      reserved: 0,
      remaining: 50,
      resetsAt: '2026-11-23T00:00:00.000Z',
      plan: { code: 'free', name: 'Free' },
    });
  });

  it("counts today's usage and reservations, today's grants, and the current plan", async () => {
    const { cookie, id } = await registerUser(t.http);
    at('2026-11-22T23:59:59Z');
    await sql(
      `INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, '2026-11-22', 10, 5), ($1, '2026-11-21', 40, 0)`,
      [id],
    );
    await sql(
      `INSERT INTO "CreditGrant" (id, "userId", credits, "firstDay", "lastDay", reason) VALUES
        (gen_random_uuid(), $1, 100, '2026-11-20', '2026-11-22', 'support'),
        (gen_random_uuid(), $1, 999, '2026-11-01', '2026-11-21', 'expired')`,
      [id],
    );
    const today = await t.http
      .get('/v1/billing/quota')
      .set('Cookie', cookie)
      .expect(200);
    expect(today.body).toEqual(
      expect.objectContaining({
        limit: 150,
        used: 10,
        reserved: 5,
        remaining: 135,
      }),
    );

    await sql(`UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`, [id]);
    const upgraded = await t.http
      .get('/v1/billing/quota')
      .set('Cookie', cookie)
      .expect(200);
    expect(upgraded.body).toEqual(
      expect.objectContaining({
        limit: 2100,
        remaining: 2085,
        plan: { code: 'pro', name: 'Pro' },
      }),
    );

    at('2026-11-23T00:00:00Z');
    const tomorrow = await t.http
      .get('/v1/billing/quota')
      .set('Cookie', cookie)
      .expect(200);
    expect(tomorrow.body).toEqual(
      expect.objectContaining({
        limit: 2000,
        used: 0,
        reserved: 0,
        remaining: 2000,
        resetsAt: '2026-11-24T00:00:00.000Z',
      }),
    );
  });

  it('never reports a negative remaining balance', async () => {
    const { cookie, id } = await registerUser(t.http);
    at('2026-11-22T12:00:00Z');
    await sql(
      `INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, '2026-11-22', 60, 0)`,
      [id],
    );
    const res = await t.http
      .get('/v1/billing/quota')
      .set('Cookie', cookie)
      .expect(200);
    expect(res.body).toEqual(
      expect.objectContaining({ limit: 50, used: 60, remaining: 0 }),
    );
  });

  it('answers 401 without a session', async () => {
    await t.http.get('/v1/billing/quota').expect(401);
  });
});
