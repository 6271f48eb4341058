import { randomUUID } from 'node:crypto';
import {
  registerUser,
  uniqueEmail,
  registerVerifiedUser,
} from './support/factories';
import { sql } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;

const today = () => new Date().toISOString().slice(0, 10);
const dayOffset = (days: number) =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

describe('admin: credits, ledger, usage, catalog and templates', () => {
  const rootEmail = uniqueEmail('root');
  let t: TestApp;
  let root: User;
  // The suite changes the catalog (a model added, plans' models): on a database of its own, so other
  // suites' instances never see those rows.
  let database: ScratchDatabase;
  const db = <T = Record<string, unknown>>(query: string, values?: unknown[]) =>
    sql<T>(query, values, database.url);

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_admin_catalog');
    t = await bootTestApp({
      DATABASE_URL: database.url,
      ADMIN_EMAILS: rootEmail,
      ECHO_DELAY_MS: '0',
    });
    root = await registerVerifiedUser(t.http, {
      email: rootEmail,
      databaseUrl: database.url,
    });
  });
  afterAll(async () => {
    await t.close();
    await database.drop();
  });

  const get = (path: string, cookie = root.cookie) =>
    t.http.get(path).set('Cookie', cookie);
  const post = (
    path: string,
    body: Record<string, unknown>,
    cookie = root.cookie,
  ) => t.http.post(path).set('Cookie', cookie).send(body);
  const chat = (user: User, key: string) =>
    post(
      '/v1/chat',
      {
        model: 'local/echo',
        idempotencyKey: key,
        messages: [{ role: 'user', content: 'hello there' }],
      },
      user.cookie,
    ).expect(200);

  describe('credits', () => {
    it('grants credits for today: quota, the user’s ledger and the audit log show it', async () => {
      const user = await registerUser(t.http);
      const before = (await get('/v1/billing/quota', user.cookie).expect(200))
        .body.limit as number;
      const res = await post(`/v1/admin/users/${user.id}/credits`, {
        credits: 250,
        reason: 'Outage compensation',
      }).expect(201);
      expect(res.body.grant).toEqual({
        id: expect.any(String),
        credits: 250,
        firstDay: today(),
        lastDay: today(),
        reason: 'Outage compensation',
      });
      expect(res.body.usageToday.limit).toBe(before + 250);
      expect(
        (await get('/v1/billing/quota', user.cookie).expect(200)).body.limit,
      ).toBe(before + 250);

      const ledger = (await get('/v1/billing/usage', user.cookie).expect(200))
        .body.data;
      expect(ledger[0]).toMatchObject({
        kind: 'grant',
        status: 'granted',
        credits: 250,
        reason: 'Outage compensation',
      });
      const [entry] = (
        await get(`/v1/admin/ledger?userId=${user.id}`).expect(200)
      ).body.data;
      expect(entry).toMatchObject({
        kind: 'grant',
        userId: user.id,
        adminId: root.id,
        credits: 250,
        cachedInputTokens: 0,
        requestedModelId: null,
      });
      const audit = (
        await get(`/v1/admin/audit?targetId=${user.id}`).expect(200)
      ).body.data;
      expect(audit[0]).toMatchObject({
        action: 'user.credits',
        admin: { id: root.id },
        reason: 'Outage compensation',
        after: { credits: 250 },
      });
    });

    it('grants credits for a future period without changing today', async () => {
      const user = await registerUser(t.http);
      const before = (await get('/v1/billing/quota', user.cookie)).body
        .limit as number;
      await post(`/v1/admin/users/${user.id}/credits`, {
        credits: 100,
        firstDay: dayOffset(1),
        lastDay: dayOffset(7),
        reason: 'Launch week',
      }).expect(201);
      expect((await get('/v1/billing/quota', user.cookie)).body.limit).toBe(
        before,
      );
      const [grant] = await db<{ firstDay: Date; lastDay: Date }>(
        'SELECT "firstDay", "lastDay" FROM "CreditGrant" WHERE "userId" = $1',
        [user.id],
      );
      expect([
        grant.firstDay.toISOString().slice(0, 10),
        grant.lastDay.toISOString().slice(0, 10),
      ]).toEqual([dayOffset(1), dayOffset(7)]);
    });

    it('refuses bad grants with 400 naming the field, and unknown users with 404, changing nothing', async () => {
      const user = await registerUser(t.http);
      const cases: [Record<string, unknown>, string][] = [
        [{ credits: 0, reason: 'x' }, 'credits'],
        [{ credits: 1.5, reason: 'x' }, 'credits'],
        [{ credits: '10', reason: 'x' }, 'credits'],
        [{ credits: 10 }, 'reason'],
        [{ credits: 10, reason: 'x', firstDay: '2026-02-31' }, 'firstDay'],
        [{ credits: 10, reason: 'x', firstDay: 'tomorrow' }, 'firstDay'],
        [
          {
            credits: 10,
            reason: 'x',
            firstDay: dayOffset(3),
            lastDay: dayOffset(1),
          },
          'lastDay',
        ],
        [
          {
            credits: 10,
            reason: 'x',
            firstDay: dayOffset(-10),
            lastDay: dayOffset(-5),
          },
          'lastDay',
        ],
        [
          {
            credits: 10,
            reason: 'x',
            firstDay: today(),
            lastDay: dayOffset(400),
          },
          'lastDay',
        ],
        [{ credits: 10, reason: 'x', adminId: randomUUID() }, 'adminId'],
        [
          {
            credits: 10,
            reason: 'x',
            firstDay: dayOffset(400),
            lastDay: dayOffset(401),
          },
          'firstDay',
        ],
      ];
      for (const [body, field] of cases) {
        const res = await post(
          `/v1/admin/users/${user.id}/credits`,
          body,
        ).expect(400);
        expect(
          res.body.errors.map((error: { field: string }) => error.field),
        ).toContain(field);
      }
      await post(`/v1/admin/users/${randomUUID()}/credits`, {
        credits: 10,
        reason: 'x',
      }).expect(404);
      await post('/v1/admin/users/nope/credits', {
        credits: 10,
        reason: 'x',
      }).expect(404);
      expect(
        await db('SELECT 1 FROM "CreditGrant" WHERE "userId" = $1', [user.id]),
      ).toEqual([]);
    });
  });

  describe('ledger and usage', () => {
    it('filters ledger entries by user, model and days, and totals usage per day and model', async () => {
      const user = await registerUser(t.http);
      await chat(user, `k-${randomUUID()}`);
      await chat(user, `k-${randomUUID()}`);

      const byUser = (
        await get(
          `/v1/admin/ledger?userId=${user.id}&model=local/echo&from=${today()}&to=${today()}`,
        ).expect(200)
      ).body;
      expect(byUser.data).toHaveLength(2);
      expect(
        byUser.data.every(
          (entry: { model: string; kind: string }) =>
            entry.model === 'local/echo' && entry.kind === 'usage',
        ),
      ).toBe(true);
      // The model asked for answered itself, with nothing read from a prompt cache.
      expect(byUser.data).toEqual(
        Array(2).fill(
          expect.objectContaining({
            cachedInputTokens: 0,
            requestedModelId: null,
          }),
        ),
      );
      expect(
        (
          await get(
            `/v1/admin/ledger?userId=${user.id}&model=openai/gpt-4o-mini`,
          ).expect(200)
        ).body.data,
      ).toEqual([]);
      expect(
        (
          await get(
            `/v1/admin/ledger?userId=${user.id}&to=${dayOffset(-1)}`,
          ).expect(200)
        ).body.data,
      ).toEqual([]);
      const paged = (
        await get(`/v1/admin/ledger?userId=${user.id}&limit=1`).expect(200)
      ).body;
      expect(paged.data).toHaveLength(1);
      expect(
        (
          await get(
            `/v1/admin/ledger?userId=${user.id}&limit=1&cursor=${paged.nextCursor}`,
          ).expect(200)
        ).body.data,
      ).toHaveLength(1);

      const daily = (
        await get(`/v1/admin/usage/daily?userId=${user.id}`).expect(200)
      ).body.data;
      const credits = byUser.data.reduce(
        (sum: number, entry: { credits: number }) => sum + entry.credits,
        0,
      );
      const tokens = byUser.data.reduce(
        (sum: number, entry: { inputTokens: number; outputTokens: number }) =>
          sum + entry.inputTokens + entry.outputTokens,
        0,
      );
      expect(daily).toEqual([
        {
          day: today(),
          model: 'local/echo',
          requests: 2,
          inputTokens: expect.any(Number),
          outputTokens: expect.any(Number),
          credits,
        },
      ]);
      expect(daily[0].inputTokens + daily[0].outputTokens).toBe(tokens);
    });

    it('refuses bad filters with 400', async () => {
      for (const query of [
        'userId=nope',
        'from=2026-13-01',
        'from=2026-11-10&to=2026-11-01',
        'from=0000-01-01',
        'limit=500',
        'email=a&email=b',
      ]) {
        expect([
          query,
          (await get(`/v1/admin/ledger?${query}`)).status,
        ]).toEqual([query, 400]);
      }
      for (const query of [
        'from=2020-01-01&to=2026-01-01',
        'to=0000-01-20',
        'from=0000-01-01&to=0000-12-31',
        'model=a&model=b',
      ]) {
        expect([
          query,
          (await get(`/v1/admin/usage/daily?${query}`)).status,
        ]).toEqual([query, 400]);
      }
    });
  });

  describe('catalog and Skill templates', () => {
    it('lists plans and models as synced, inactive ones included', async () => {
      await db(`INSERT INTO "Model" (id, name, provider, endpoint, "upstreamModel", "creditsPerRequest", "creditsPer1kInput", "creditsPer1kOutput", "maxOutputTokens", "sortOrder", active, "updatedAt")
                 VALUES ('retired/model', 'Retired', 'openai', 'openai', 'old', 1, 0, 0, 100, 99, false, now()) ON CONFLICT (id) DO NOTHING`);
      const plans = (await get('/v1/admin/plans').expect(200)).body.data;
      expect(plans.map((plan: { code: string }) => plan.code)).toEqual(
        expect.arrayContaining(['free', 'pro', 'team', 'enterprise']),
      );
      expect(
        plans.find((plan: { code: string }) => plan.code === 'pro'),
      ).toMatchObject({
        active: true,
        checkoutAllowed: true,
        models: expect.arrayContaining(['local/echo']),
      });
      const models = (await get('/v1/admin/models').expect(200)).body.data;
      expect(
        models.find((model: { id: string }) => model.id === 'retired/model'),
      ).toMatchObject({ active: false, upstreamModel: 'old' });
    });

    it('creates, updates, retires and restores templates; users see each change', async () => {
      const user = await registerUser(t.http);
      const id = `notes-${randomUUID().slice(0, 8)}`;
      const userTemplates = async () =>
        (
          await get('/v1/skills/templates', user.cookie).expect(200)
        ).body.data.map((template: { id: string }) => template.id);

      const created = await post('/v1/admin/skill-templates', {
        id,
        name: 'Meeting notes',
        description: 'Notes from a transcript',
        instruction: 'Write notes.',
        input_schema: { type: 'string' },
      }).expect(201);
      expect(created.body).toMatchObject({
        id,
        name: 'Meeting notes',
        input_schema: { type: 'string' },
        output_schema: null,
        retiredAt: null,
      });
      expect(await userTemplates()).toContain(id);
      await post('/v1/admin/skill-templates', {
        id,
        name: 'Again',
        description: 'd',
        instruction: 'i',
      }).expect(409);

      const updated = await t.http
        .patch(`/v1/admin/skill-templates/${id}`)
        .set('Cookie', root.cookie)
        .send({
          instruction: 'Write short notes.',
          input_schema: null,
          reason: 'Shorter',
        })
        .expect(200);
      expect(updated.body).toMatchObject({
        instruction: 'Write short notes.',
        input_schema: null,
        name: 'Meeting notes',
      });
      const copy = await post(
        `/v1/skills/templates/${id}/duplicate`,
        {},
        user.cookie,
      ).expect(201);
      expect(copy.body.versions[0].instruction).toBe('Write short notes.');

      await post(`/v1/admin/skill-templates/${id}/retire`, {
        reason: 'Replaced',
      }).expect(200);
      expect(await userTemplates()).not.toContain(id);
      await post(
        `/v1/skills/templates/${id}/duplicate`,
        {},
        user.cookie,
      ).expect(404);
      expect(
        (await get('/v1/admin/skill-templates').expect(200)).body.data.find(
          (template: { id: string }) => template.id === id,
        ).retiredAt,
      ).toEqual(expect.any(String));
      await post(`/v1/admin/skill-templates/${id}/restore`, {}).expect(200);
      expect(await userTemplates()).toContain(id);

      const actions = (
        await get(`/v1/admin/audit?targetId=${id}`).expect(200)
      ).body.data.map((entry: { action: string }) => entry.action);
      expect(actions).toEqual([
        'template.restore',
        'template.retire',
        'template.update',
        'template.create',
      ]);
    });

    it('refuses bad templates with 400 and unknown ones with 404', async () => {
      await post('/v1/admin/skill-templates', {
        id: 'Bad Id',
        name: 'n',
        description: 'd',
        instruction: 'i',
      }).expect(400);
      await post('/v1/admin/skill-templates', {
        id: 'no-name',
        description: 'd',
        instruction: 'i',
      }).expect(400);
      const badSchema = await post('/v1/admin/skill-templates', {
        id: `bad-schema-${Date.now()}`,
        name: 'n',
        description: 'd',
        instruction: 'i',
        input_schema: { type: 'nonsense' },
      }).expect(400);
      expect(badSchema.body.errors[0].field).toMatch(/^input_schema/);
      await t.http
        .patch('/v1/admin/skill-templates/no-such-template')
        .set('Cookie', root.cookie)
        .send({ name: 'x' })
        .expect(404);
      await t.http
        .patch('/v1/admin/skill-templates/summarize')
        .set('Cookie', root.cookie)
        .send({ name: '   ' })
        .expect(400);
      await post('/v1/admin/skill-templates/NOPE!/retire', {}).expect(404);
    });
  });
});
