import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogSyncService } from '../src/catalog/catalog-sync.service';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { createMigratedDatabase } from './support/test-database';

const shipped = JSON.parse(readFileSync('config/catalog.json', 'utf8'));
const dir = mkdtempSync(join(tmpdir(), 'catalog-'));

function writeCatalog(name: string, catalog: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

const query = <T = Record<string, unknown>>(url: string, text: string) =>
  sql<T>(text, [], url);

/** Runs on its own database: these tests change the catalog, which the other suites rely on. */
describe('catalog sync', () => {
  let database: { url: string; drop: () => Promise<void> };
  let t: TestApp | undefined;
  beforeAll(async () => {
    database = await createMigratedDatabase('chat_catalog');
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  afterAll(() => database.drop());

  it('syncs the catalog at start, and again without changes (also several syncs at once, without deadlock)', async () => {
    t = await bootTestApp({ DATABASE_URL: database.url });
    const before = await query(
      database.url,
      'SELECT * FROM "PlanModel" ORDER BY 1, 2',
    );
    const sync = t.app.get(CatalogSyncService);
    await Promise.all([
      sync.onApplicationBootstrap(),
      sync.onApplicationBootstrap(),
      sync.onApplicationBootstrap(),
    ]);
    expect(
      await query(database.url, 'SELECT * FROM "PlanModel" ORDER BY 1, 2'),
    ).toEqual(before);
    const counts = await query<{ plans: string; models: string }>(
      database.url,
      'SELECT (SELECT count(*) FROM "Plan") AS plans, (SELECT count(*) FROM "Model") AS models',
    );
    expect(counts[0]).toEqual({
      plans: '4',
      models: String(shipped.models.length),
    });
  });

  it('deactivates (never deletes) models and plans removed from the file, and updates changed ones', async () => {
    const trimmed = structuredClone(shipped);
    trimmed.plans = trimmed.plans.filter(
      (plan: { code: string }) => plan.code !== 'team',
    );
    trimmed.models = trimmed.models.filter(
      (model: { id: string }) => model.id !== 'anthropic/claude-haiku-4-5',
    );
    for (const plan of trimmed.plans)
      plan.models = plan.models.filter(
        (id: string) => id !== 'anthropic/claude-haiku-4-5',
      );
    trimmed.plans[1].dailyCredits = 3000;
    t = await bootTestApp({
      DATABASE_URL: database.url,
      CATALOG_FILE: writeCatalog('trimmed.json', trimmed),
    });

    const plans = await query<{ code: string; active: boolean }>(
      database.url,
      'SELECT code, active FROM "Plan" ORDER BY "sortOrder", code',
    );
    expect(plans).toEqual(
      expect.arrayContaining([
        { code: 'team', active: false },
        { code: 'pro', active: true },
      ]),
    );
    const model = await query<{ active: boolean }>(
      database.url,
      `SELECT active FROM "Model" WHERE id = 'anthropic/claude-haiku-4-5'`,
    );
    expect(model).toEqual([{ active: false }]);

    const res = await t.http.get('/v1/plans').expect(200);
    expect(res.body.data.map((plan: { code: string }) => plan.code)).toEqual([
      'free',
      'pro',
      'enterprise',
    ]);
    expect(res.body.data[1].dailyCredits).toBe(3000);
    const modelIds = res.body.data.flatMap(
      (plan: { models: { id: string }[] }) => plan.models.map((m) => m.id),
    );
    expect(modelIds).not.toContain('anthropic/claude-haiku-4-5');
  });

  it('reactivates an entry that comes back', async () => {
    t = await bootTestApp({ DATABASE_URL: database.url });
    const res = await t.http.get('/v1/plans').expect(200);
    expect(res.body.data.map((plan: { code: string }) => plan.code)).toEqual([
      'free',
      'pro',
      'team',
      'enterprise',
    ]);
    expect(res.body.data[1].dailyCredits).toBe(shipped.plans[1].dailyCredits);
  });

  it('refuses to start with a malformed catalog, naming the bad entry, and changes nothing', async () => {
    const before = await query(
      database.url,
      'SELECT * FROM "Plan" ORDER BY code',
    );
    const broken = structuredClone(shipped);
    broken.plans[2].models = ['local/echo', 'nobody/nothing'];
    const file = writeCatalog('broken.json', broken);
    await expect(
      bootTestApp({ DATABASE_URL: database.url, CATALOG_FILE: file }),
    ).rejects.toThrow(
      `Invalid catalog ${file}:\n  - plans[2] (team).models: unknown model id "nobody/nothing"`,
    );
    expect(
      await query(database.url, 'SELECT * FROM "Plan" ORDER BY code'),
    ).toEqual(before);
  });
});
