import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { SessionUser } from '../src/auth/session-user';
import { ToolRegistry } from '../src/tools/tool-registry';
import { eventually } from './support/eventually';
import { echoTool, FakeMcpServer } from './support/fake-mcp-server';
import {
  registerUser,
  registerVerifiedUser,
  uniqueEmail,
} from './support/factories';
import { sql } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;

/** A bound for things that happen at once (a notification, a watch): liveness, not speed. */
const LIVENESS_MS = 15_000;

/**
 * MCP servers admins register (/v1/admin/mcp-servers) and the tools they bring to GET /v1/tools, against a
 * real MCP server on loopback (the SDK's Server over Streamable HTTP). On a database of its own: servers are
 * global and would show in other suites' tool lists. docs/adr/0061-tools.md
 */
describe('MCP servers', () => {
  const adminEmail = uniqueEmail('mcp-admin');
  let database: ScratchDatabase;
  let t: TestApp;
  let admin: User;
  let user: User;
  let fake: FakeMcpServer;
  const query = <T = Record<string, unknown>>(
    text: string,
    values: unknown[] = [],
  ) => sql<T>(text, values, database.url);

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_mcp_servers');
    fake = await new FakeMcpServer([
      echoTool(),
      {
        name: 'delete_everything',
        description: 'Removes it all',
        annotations: { destructiveHint: true },
      },
    ]).start();
    t = await bootTestApp({
      DATABASE_URL: database.url,
      ADMIN_EMAILS: adminEmail,
      MCP_ALLOWED_HOSTS: '127.0.0.1',
    });
    admin = await registerVerifiedUser(t.http, {
      email: adminEmail,
      databaseUrl: database.url,
    });
    user = await registerUser(t.http);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await database?.drop();
  });

  const post = (path: string, body: unknown) =>
    t.http
      .post(path)
      .set('Cookie', admin.cookie)
      .send(body as object);
  const patch = (path: string, body: unknown) =>
    t.http
      .patch(path)
      .set('Cookie', admin.cookie)
      .send(body as object);
  const toolsOf = async (cookie: string) =>
    (await t.http.get('/v1/tools').set('Cookie', cookie).expect(200)).body
      .data as { id: string; source: string; approval: string }[];
  const register = (name: string, extra: Record<string, unknown> = {}) =>
    post('/v1/admin/mcp-servers', { name, url: fake.url, ...extra });

  it('registers a server, reads its tools at once and offers them to users as mcp.<server>.<tool>', async () => {
    const res = await register('files-box', {
      headers: { Authorization: 'Bearer very-secret-token', 'X-Team': 'a' },
      reason: 'the team asked',
    }).expect(201);
    expect(res.body).toMatchObject({
      name: 'files-box',
      url: fake.url,
      headerNames: ['Authorization', 'X-Team'],
      enabled: true,
      plans: [],
      approval: null,
      toolsError: null,
    });
    expect(JSON.stringify(res.body)).not.toContain('very-secret-token');
    expect(res.body.tools).toEqual([
      expect.objectContaining({
        id: 'mcp.files-box.echo',
        name: 'echo',
        readOnly: true,
        destructive: false,
        approval: 'auto',
      }),
      expect.objectContaining({
        id: 'mcp.files-box.delete_everything',
        destructive: true,
        approval: 'confirm',
      }),
    ]);
    expect(fake.requestHeaders.at(-1)?.authorization).toBe(
      'Bearer very-secret-token',
    );

    const [row] = await query<{ headers: Record<string, string> }>(
      `SELECT headers FROM "McpServer" WHERE name = 'files-box'`,
    );
    expect(Object.keys(row.headers).sort()).toEqual([
      'Authorization',
      'X-Team',
    ]);
    expect(JSON.stringify(row.headers)).not.toContain('very-secret-token');

    const tools = await toolsOf(user.cookie);
    expect(tools.map((tool) => tool.id)).toEqual([
      'files.search',
      'mcp.files-box.echo',
      'mcp.files-box.delete_everything',
    ]);
    expect(tools[1]).toMatchObject({ source: 'files-box', approval: 'auto' });
    expect(tools[2]).toMatchObject({ approval: 'confirm' });

    const [audit] = await query<{ after: unknown }>(
      `SELECT after FROM "AuditLog" WHERE action = 'mcp_server.create' AND "targetId" = $1`,
      [res.body.id],
    );
    expect(JSON.stringify(audit.after)).toContain('Authorization');
    expect(JSON.stringify(audit.after)).not.toContain('very-secret-token');
  });

  it('runs a tool through the registry with the execution id in _meta', async () => {
    const caller = {
      id: user.id,
      planCode: 'free',
    } as unknown as SessionUser;
    const tool = await t.app
      .get(ToolRegistry)
      .find(caller, 'mcp.files-box.echo');
    expect(tool).toBeDefined();
    const before = fake.executions('echo');
    await expect(
      tool!.execute(caller, { text: 'hi' }, { executionId: 'e-1' }),
    ).resolves.toBe('echo: hi');
    expect(fake.executions('echo')).toBe(before + 1);
    expect(fake.calls.at(-1)?.meta).toEqual(
      expect.objectContaining({ executionId: 'e-1' }),
    );
  });

  it('offers a server limited to plans only to users of those plans', async () => {
    await register('pro-only', { plans: ['pro'] }).expect(201);
    const ids = (await toolsOf(user.cookie)).map((tool) => tool.id);
    expect(ids.some((id) => id.startsWith('mcp.pro-only.'))).toBe(false);
    await query(`UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`, [
      user.id,
    ]);
    await eventually(
      async () =>
        (await toolsOf(user.cookie)).some(
          (tool) => tool.id === 'mcp.pro-only.echo',
        ),
      LIVENESS_MS,
    );
    await query(`UPDATE "User" SET "planCode" = 'free' WHERE id = $1`, [
      user.id,
    ]);
  });

  it('follows the tool list when the server announces a change (tools/list_changed)', async () => {
    await eventually(() => fake.openSessions() > 0, LIVENESS_MS);
    await fake.setTools([echoTool(), echoTool('shout')]);
    await eventually(
      async () =>
        (await toolsOf(user.cookie)).some(
          (tool) => tool.id === 'mcp.files-box.shout',
        ),
      LIVENESS_MS,
    );
    const ids = (await toolsOf(user.cookie)).map((tool) => tool.id);
    expect(ids).not.toContain('mcp.files-box.delete_everything');
  });

  it('refuses what is not acceptable with a 400 naming it, and stores nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'Bad Name', url: fake.url }, 'name'],
      [{ name: 'x'.repeat(33), url: fake.url }, 'name'],
      [{ name: 'ok-1', url: 'ftp://example.com/mcp' }, 'url'],
      [{ name: 'ok-2', url: 'not a url' }, 'url'],
      [{ name: 'ok-3', url: 'http://10.1.2.3/mcp' }, 'url'],
      [{ name: 'ok-4', url: 'http://169.254.169.254/latest' }, 'url'],
      [{ name: 'ok-5', url: 'http://[::1]:8080/mcp' }, 'url'],
      [{ name: 'ok-6', url: 'https://user:pw@example.com/mcp' }, 'url'],
      [{ name: 'ok-7', url: fake.url, headers: { Host: 'x' } }, 'headers'],
      [{ name: 'ok-8', url: fake.url, headers: { 'X-A': 1 } }, 'headers'],
      [{ name: 'ok-9', url: fake.url, headers: ['a'] }, 'headers'],
      [
        { name: 'ok-10', url: fake.url, headers: { 'X-A': 'a\r\nb: c' } },
        'headers',
      ],
      [{ name: 'ok-11', url: fake.url, plans: ['gold'] }, 'plans'],
      [{ name: 'ok-12', url: fake.url, approval: 'sometimes' }, 'approval'],
      [
        { name: 'ok-13', url: fake.url, toolPolicies: { echo: 'yes' } },
        'toolPolicies',
      ],
      [{ name: 'ok-14', url: fake.url, extra: true }, 'extra'],
      [{ url: fake.url }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await post('/v1/admin/mcp-servers', body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    const names = await query<{ name: string }>(
      `SELECT name FROM "McpServer" WHERE name LIKE 'ok-%'`,
    );
    expect(names).toEqual([]);
  });

  it('answers 409 for a name taken, on create and on rename', async () => {
    await register('files-box').expect(409);
    const other = await register('other-box').expect(201);
    await patch(`/v1/admin/mcp-servers/${other.body.id}`, {
      name: 'files-box',
    }).expect(409);
    await t.http
      .delete(`/v1/admin/mcp-servers/${other.body.id}`)
      .set('Cookie', admin.cookie)
      .expect(204);
  });

  it('changes policies and headers, keeps the reading error of an unreachable server with its old tools', async () => {
    const created = await register('flaky', {
      headers: { 'X-Key': 'k1' },
    }).expect(201);
    const id = created.body.id as string;
    const changed = await patch(`/v1/admin/mcp-servers/${id}`, {
      approval: 'confirm',
      toolPolicies: { echo: 'auto' },
      headers: null,
    }).expect(200);
    expect(changed.body.headerNames).toEqual([]);
    const byName = Object.fromEntries(
      (changed.body.tools as { name: string; approval: string }[]).map(
        (tool) => [tool.name, tool.approval],
      ),
    );
    expect(byName).toEqual({ echo: 'auto', shout: 'confirm' });

    fake.broken = { status: 502, body: 'bad gateway' };
    try {
      const refreshed = await t.http
        .post(`/v1/admin/mcp-servers/${id}/refresh`)
        .set('Cookie', admin.cookie)
        .expect(200);
      expect(refreshed.body.toolsError).toEqual(expect.any(String));
      expect(refreshed.body.tools).toHaveLength(2);
    } finally {
      fake.broken = undefined;
    }
    const healed = await t.http
      .post(`/v1/admin/mcp-servers/${id}/refresh`)
      .set('Cookie', admin.cookie)
      .expect(200);
    expect(healed.body.toolsError).toBeNull();
  });

  it('checks the address actually connected to: a name resolving to loopback is refused unless listed', async () => {
    const res = await register('by-name', {
      url: fake.url.replace('127.0.0.1', 'localhost'),
    }).expect(201);
    expect(res.body.tools).toEqual([]);
    expect(res.body.toolsError).toMatch(/MCP_ALLOWED_HOSTS/);
  });

  it('disables and removes a server: its tools are offered no more; unknown ids are 404', async () => {
    const listed = await t.http
      .get('/v1/admin/mcp-servers')
      .set('Cookie', admin.cookie)
      .expect(200);
    const box = (listed.body.data as { id: string; name: string }[]).find(
      (server) => server.name === 'files-box',
    )!;
    await patch(`/v1/admin/mcp-servers/${box.id}`, { enabled: false }).expect(
      200,
    );
    expect(
      (await toolsOf(user.cookie)).some((tool) =>
        tool.id.startsWith('mcp.files-box.'),
      ),
    ).toBe(false);
    await t.http
      .delete(`/v1/admin/mcp-servers/${box.id}`)
      .set('Cookie', admin.cookie)
      .send({ reason: 'retired' })
      .expect(204);
    for (const path of [
      box.id,
      'not-a-uuid',
      '0190a0a0-0000-7000-8000-000000000000',
    ])
      await t.http
        .get(`/v1/admin/mcp-servers/${path}`)
        .set('Cookie', admin.cookie)
        .expect(404);
    await t.http
      .get('/v1/admin/mcp-servers')
      .set('Cookie', user.cookie)
      .expect(403);
  });

  it('ends its sessions at the server once they are no longer needed (DELETE), watches included', async () => {
    const listed = await t.http
      .get('/v1/admin/mcp-servers')
      .set('Cookie', admin.cookie)
      .expect(200);
    for (const server of listed.body.data as { id: string }[])
      await t.http
        .delete(`/v1/admin/mcp-servers/${server.id}`)
        .set('Cookie', admin.cookie)
        .expect(204);
    await eventually(() => fake.openSessions() === 0, LIVENESS_MS);
  });
});
