import { randomUUID } from 'node:crypto';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { ChatSweeperService } from '../src/chat/chat-sweeper.service';
import {
  listen,
  parseEvents,
  post,
  ReceivedEvent,
} from './support/chat-client';
import { eventually } from './support/eventually';
import { echoTool, FakeMcpServer } from './support/fake-mcp-server';
import { FakeModelServer } from './support/fake-model-servers';
import { registerVerifiedUser, uniqueEmail } from './support/factories';
import { sql } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerVerifiedUser>>;

const EVENTS: Record<string, string> = { Accept: 'text/event-stream' };
const LIVENESS_MS = 15_000;

/**
 * The tool loop of a run (docs/adr/0061-tools.md) with the built-in `local/echo` model, whose
 * `/tool <id> <json>` calls a tool: events, executions recorded once, replays and joins that run nothing
 * again, the conversation's toolCalls. Two instances share the database and Redis. On a database of its
 * own: MCP servers are global.
 */
describe('tools in a run', () => {
  const adminEmail = uniqueEmail('tools-admin');
  let database: ScratchDatabase;
  let a: TestApp;
  let b: TestApp;
  let baseA: string;
  let baseB: string;
  let user: User;
  let admin: User;
  let fake: FakeMcpServer;
  let model: FakeModelServer;
  let releaseSlow: () => void = () => undefined;
  const query = <T = Record<string, unknown>>(
    text: string,
    values: unknown[] = [],
  ) => sql<T>(text, values, database.url);

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_tools_runs');
    fake = await new FakeMcpServer([
      echoTool(),
      {
        name: 'slow',
        description: 'Answers once the test lets it',
        annotations: { readOnlyHint: true },
        run: () =>
          new Promise<string>((resolve) => {
            releaseSlow = () => resolve('slow done');
          }),
      },
      {
        name: 'wipe',
        description: 'Destroys things',
        annotations: { destructiveHint: true },
      },
      {
        name: 'huge',
        description: 'Answers a lot',
        annotations: { readOnlyHint: true },
        run: () => 'x'.repeat(50_000),
      },
    ]).start();
    model = await new FakeModelServer().start();
    const env = {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: model.baseUrl,
      DATABASE_URL: database.url,
      ADMIN_EMAILS: adminEmail,
      MCP_ALLOWED_HOSTS: '127.0.0.1',
      TOOL_RESULT_MAX_CHARS: '1000',
    };
    [a, b] = [await bootTestApp(env), await bootTestApp(env)];
    [baseA, baseB] = [await listen(a), await listen(b)];
    admin = await registerVerifiedUser(a.http, {
      email: adminEmail,
      databaseUrl: database.url,
    });
    await a.http
      .post('/v1/admin/mcp-servers')
      .set('Cookie', admin.cookie)
      .send({ name: 'box', url: fake.url })
      .expect(201);
    user = await registerVerifiedUser(a.http, { databaseUrl: database.url });
    // Many runs below, each of two model calls: more than the free plan's daily credits.
    await query(`UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`, [
      user.id,
    ]);
  });
  afterAll(async () => {
    releaseSlow();
    await a?.close();
    await b?.close();
    await fake?.close();
    await model?.close();
    await database?.drop();
  });

  const turn = (
    content: string,
    tools: string[] | undefined,
    idempotencyKey = randomUUID(),
    conversationId?: string,
  ) => ({
    model: 'local/echo',
    idempotencyKey,
    messages: [{ role: 'user', content }],
    ...(tools ? { tools } : {}),
    ...(conversationId ? { conversationId } : {}),
  });
  const send = (base: string, body: unknown, headers = EVENTS) =>
    post(base, '/v1/chat', user.cookie, body, headers).response;
  const named = (events: ReceivedEvent[], name: string) =>
    events.filter((event) => event.event === name).map((event) => event.data);
  const executions = (runId: string) =>
    query<{ status: string; toolId: string; content: string }>(
      `SELECT status, "toolId", content FROM "ToolExecution" WHERE "chatRequestId" = $1 ORDER BY step, "callIndex"`,
      [runId],
    );

  it('calls an MCP tool once, streams tool_call and tool_result among the text, and stores the call on the answer', async () => {
    const key = randomUUID();
    const body = turn(
      '/tool mcp.box.echo {"text":"hello"}',
      ['mcp.box.echo'],
      key,
    );
    const res = await send(baseA, body);
    expect(res.status).toBe(200);
    const events = parseEvents(res.body);
    expect(events.map((event) => event.event)).toEqual([
      'meta',
      'tool_call',
      'tool_result',
      ...Array<string>(
        events.filter((event) => event.event === 'delta').length,
      ).fill('delta'),
      'usage',
      'done',
    ]);
    const [call] = named(events, 'tool_call');
    const [result] = named(events, 'tool_result');
    expect(call).toEqual({
      id: expect.any(String),
      tool: 'mcp.box.echo',
      arguments: { text: 'hello' },
    });
    expect(result).toEqual({
      id: call.id,
      tool: 'mcp.box.echo',
      status: 'ok',
      content: 'echo: hello',
    });
    const text = named(events, 'delta')
      .map((delta) => delta.text)
      .join('');
    expect(text).toBe('Echo: Tool result: echo: hello');
    expect(named(events, 'done')).toEqual([{ status: 'completed' }]);
    expect(fake.executions('echo')).toBe(1);
    expect(fake.calls.at(-1)?.meta).toEqual(
      expect.objectContaining({ executionId: call.id }),
    );

    const runId = named(events, 'meta')[0].requestId as string;
    expect(await executions(runId)).toEqual([
      { status: 'ok', toolId: 'mcp.box.echo', content: 'echo: hello' },
    ]);

    // A replay, on either instance, tells the same story and runs nothing again.
    for (const base of [baseA, baseB]) {
      const replay = await send(base, body);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const again = parseEvents(replay.body);
      expect(named(again, 'tool_call')).toEqual([call]);
      expect(named(again, 'tool_result')).toEqual([result]);
      expect(
        named(again, 'delta')
          .map((delta) => delta.text)
          .join(''),
      ).toBe(text);
    }
    const plain = await send(baseB, body, {});
    expect(plain.body).toBe(text);
    expect(fake.executions('echo')).toBe(1);

    const conversationId = named(events, 'meta')[0].conversationId as string;
    const conversation = await a.http
      .get(`/v1/conversations/${conversationId}`)
      .set('Cookie', user.cookie)
      .expect(200);
    const answer = conversation.body.messages.at(-1);
    expect(answer).toMatchObject({
      role: 'assistant',
      content: text,
      toolCalls: [
        {
          id: call.id,
          tool: 'mcp.box.echo',
          arguments: { text: 'hello' },
          status: 'ok',
          content: 'echo: hello',
        },
      ],
    });
    expect(conversation.body.messages[0].toolCalls).toEqual([]);
  });

  it('refuses a tool the caller may not use with a 400 naming it, storing and billing nothing', async () => {
    const key = randomUUID();
    for (const tools of [['mcp.box.nope'], ['files.search', 'no.such']]) {
      const res = await a.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send(turn('hi', tools, key))
        .expect(400);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(JSON.stringify(res.body)).toContain(tools.at(-1));
    }
    for (const tools of [
      'files.search',
      ['bad id!'],
      Array.from({ length: 33 }, (_, index) => `t.${index}`),
      ['files.search', 'files.search'],
    ])
      await a.http
        .post('/v1/chat')
        .set('Cookie', user.cookie)
        .send({ ...turn('hi', undefined, key), tools })
        .expect(400);
    const rows = await query(
      `SELECT 1 FROM "ChatRequest" WHERE "idempotencyKey" = $1`,
      [key],
    );
    expect(rows).toEqual([]);
  });

  it('without tools, a chat is what it always was: /tool is just text', async () => {
    const res = await send(baseA, turn('/tool mcp.box.echo {}', undefined));
    const events = parseEvents(res.body);
    expect(named(events, 'tool_call')).toEqual([]);
    expect(
      named(events, 'delta')
        .map((delta) => delta.text)
        .join(''),
    ).toBe('Echo: /tool mcp.box.echo {}');
  });

  it('tells the model about arguments that do not fit, unknown tools, denied calls and cut results, and completes', async () => {
    const cases: [string, string, string][] = [
      ['/tool mcp.box.echo {"text": 5}', 'error', 'input schema'],
      ['/tool mcp.box.echo not json', 'error', 'not valid JSON'],
      ['/tool mcp.box.absent {}', 'error', 'no tool named'],
      // Nested deeper than a recursive reader can follow: still a tool error, not a failed run.
      [
        `/tool mcp.box.echo {"text":"t","deep":${'['.repeat(15_000)}${']'.repeat(15_000)}}`,
        'error',
        '',
      ],
    ];
    const before = fake.calls.length;
    for (const [content, status, words] of cases) {
      const events = parseEvents(
        (
          await send(
            baseA,
            turn(content, ['mcp.box.echo', 'mcp.box.wipe', 'files.search']),
          )
        ).body,
      );
      const [result] = named(events, 'tool_result');
      expect({ content, status: result.status }).toEqual({ content, status });
      expect(result.content).toContain(words);
      expect(named(events, 'done')).toEqual([{ status: 'completed' }]);
    }
    expect(fake.calls.length).toBe(before);

    const huge = parseEvents(
      (await send(baseA, turn('/tool mcp.box.huge {}', ['mcp.box.huge']))).body,
    );
    const [cut] = named(huge, 'tool_result');
    expect(cut.status).toBe('ok');
    expect(String(cut.content)).toMatch(
      /^x{1000}\n\[cut: 49000 more characters/,
    );
  });

  it('denies at once a call that needs approval when the client reads plain text', async () => {
    const before = fake.executions('wipe');
    const res = await send(
      baseA,
      turn('/tool mcp.box.wipe {}', ['mcp.box.wipe']),
      {},
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/^Echo: Tool result: \[denied\] .*approval/);
    expect(fake.executions('wipe')).toBe(before);
  });

  describe('approvals', () => {
    const pendingApproval = async () => {
      let id = '';
      await eventually(async () => {
        const rows = await query<{ id: string }>(
          `SELECT id FROM "ToolApproval" WHERE "userId" = $1 AND status = 'pending'`,
          [user.id],
        );
        id = rows[0]?.id ?? '';
        return id !== '';
      }, LIVENESS_MS);
      return id;
    };
    const decide = (
      base: TestApp,
      approvalId: string,
      decision: unknown,
      cookie = user.cookie,
    ) =>
      base.http
        .post(`/v1/chat/approvals/${approvalId}`)
        .set('Cookie', cookie)
        .send({ decision });

    it('waits for the owner: approved on the other instance, the call runs once; a replay shows the same approval', async () => {
      const key = randomUUID();
      const body = turn(
        '/tool mcp.box.wipe {"all":true}',
        ['mcp.box.wipe'],
        key,
      );
      const before = fake.executions('wipe');
      const running = send(baseA, body);
      const approvalId = await pendingApproval();
      expect(fake.executions('wipe')).toBe(before);

      const stranger = await registerVerifiedUser(b.http, {
        databaseUrl: database.url,
      });
      await decide(b, approvalId, 'approve', stranger.cookie).expect(404);
      await decide(b, approvalId, 'maybe').expect(400);
      await decide(b, 'not-an-id', 'approve').expect(404);
      expect((await decide(b, approvalId, 'approve').expect(200)).body).toEqual(
        { approvalId, status: 'approved' },
      );
      await decide(b, approvalId, 'deny').expect(409);

      const events = parseEvents((await running).body);
      expect(events.map((event) => event.event).slice(0, 4)).toEqual([
        'meta',
        'tool_call',
        'tool_approval',
        'tool_result',
      ]);
      const [call] = named(events, 'tool_call');
      expect(named(events, 'tool_approval')).toEqual([
        {
          approvalId,
          id: call.id,
          tool: 'mcp.box.wipe',
          arguments: { all: true },
          expiresAt: expect.any(String),
        },
      ]);
      expect(named(events, 'tool_result')).toEqual([
        expect.objectContaining({ id: call.id, status: 'ok' }),
      ]);
      expect(fake.executions('wipe')).toBe(before + 1);

      const replay = parseEvents((await send(baseB, body)).body);
      expect(named(replay, 'tool_approval')).toEqual(
        named(events, 'tool_approval'),
      );
      expect(fake.executions('wipe')).toBe(before + 1);
    });

    it('a denied call is not run and the model is told', async () => {
      const before = fake.executions('wipe');
      const running = send(
        baseA,
        turn('/tool mcp.box.wipe {}', ['mcp.box.wipe']),
      );
      const approvalId = await pendingApproval();
      await decide(a, approvalId, 'deny').expect(200);
      const events = parseEvents((await running).body);
      expect(named(events, 'tool_result')).toEqual([
        expect.objectContaining({ status: 'denied' }),
      ]);
      expect(
        named(events, 'delta')
          .map((delta) => delta.text)
          .join(''),
      ).toContain('[denied]');
      expect(fake.executions('wipe')).toBe(before);
    });

    it('a stop denies the call waiting for approval', async () => {
      const key = randomUUID();
      const before = fake.executions('wipe');
      const running = send(
        baseA,
        turn('/tool mcp.box.wipe {}', ['mcp.box.wipe'], key),
      );
      const approvalId = await pendingApproval();
      await b.http
        .post('/v1/chat/stop')
        .set('Cookie', user.cookie)
        .send({ idempotencyKey: key })
        .expect(200);
      const events = parseEvents((await running).body);
      expect(named(events, 'tool_result')).toEqual([
        expect.objectContaining({ status: 'denied' }),
      ]);
      expect(named(events, 'done')).toEqual([{ status: 'stopped' }]);
      await decide(a, approvalId, 'approve').expect(409);
      expect(fake.executions('wipe')).toBe(before);
    });

    it('an approval nobody decides in time is denied', async () => {
      const quick = await bootTestApp({
        DATABASE_URL: database.url,
        MCP_ALLOWED_HOSTS: '127.0.0.1',
        TOOL_APPROVAL_TIMEOUT_MS: '1000',
      });
      try {
        const before = fake.executions('wipe');
        const res = await post(
          await listen(quick),
          '/v1/chat',
          user.cookie,
          turn('/tool mcp.box.wipe {}', ['mcp.box.wipe']),
          EVENTS,
        ).response;
        const events = parseEvents(res.body);
        const [approval] = named(events, 'tool_approval');
        expect(named(events, 'tool_result')).toEqual([
          expect.objectContaining({ status: 'denied' }),
        ]);
        await decide(a, String(approval.approvalId), 'approve').expect(409);
        const [row] = await query<{ status: string }>(
          `SELECT status FROM "ToolApproval" WHERE id = $1`,
          [approval.approvalId],
        );
        expect(row.status).toBe('expired');
        expect(fake.executions('wipe')).toBe(before);
      } finally {
        await quick.close();
      }
    });
  });

  describe('money', () => {
    it('keeps one ledger entry per run listing its steps and calls, each model call priced as a request', async () => {
      const payer = await registerVerifiedUser(a.http, {
        databaseUrl: database.url,
      });
      const res = await post(
        baseA,
        '/v1/chat',
        payer.cookie,
        turn('/tool mcp.box.echo {"text":"bill me"}', ['mcp.box.echo']),
        EVENTS,
      ).response;
      const events = parseEvents(res.body);
      const [call] = named(events, 'tool_call');
      const [usage] = named(events, 'usage');
      // local/echo costs 1 credit a request: two model calls.
      expect(usage.credits).toBe(2);
      const ledger = (
        await a.http
          .get('/v1/billing/usage')
          .set('Cookie', payer.cookie)
          .expect(200)
      ).body.data as Record<string, unknown>[];
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({
        status: 'completed',
        credits: 2,
        steps: [
          { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
          { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
        ],
        toolCalls: [{ id: call.id, tool: 'mcp.box.echo', status: 'ok' }],
      });
      const [day] = await query<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM "DailyUsage" WHERE "userId" = $1`,
        [payer.id],
      );
      expect(day).toEqual({ used: 2, reserved: 0 });
    });

    it('charges a priced tool once per call that runs, held by the reservation first', async () => {
      const servers = (
        await a.http
          .get('/v1/admin/mcp-servers')
          .set('Cookie', admin.cookie)
          .expect(200)
      ).body.data as { id: string; name: string }[];
      const box = servers.find((server) => server.name === 'box')!;
      const setPrices = (toolPrices: Record<string, unknown>) =>
        a.http
          .patch(`/v1/admin/mcp-servers/${box.id}`)
          .set('Cookie', admin.cookie)
          .send({ toolPrices });
      await setPrices({ echo: -1 }).expect(400);
      await setPrices({ echo: 1.5 }).expect(400);
      const priced = await setPrices({ echo: 3 }).expect(200);
      expect(priced.body.toolPrices).toEqual({ echo: 3 });
      expect(
        (priced.body.tools as { name: string; price: number }[]).find(
          (tool) => tool.name === 'echo',
        )?.price,
      ).toBe(3);
      try {
        const payer = await registerVerifiedUser(a.http, {
          databaseUrl: database.url,
        });
        const listed = (
          await a.http.get('/v1/tools').set('Cookie', payer.cookie).expect(200)
        ).body.data as { id: string; price: number }[];
        expect(listed.find((tool) => tool.id === 'mcp.box.echo')?.price).toBe(
          3,
        );
        expect(listed.find((tool) => tool.id === 'files.search')?.price).toBe(
          0,
        );

        const before = fake.executions('echo');
        const events = parseEvents(
          (
            await post(
              baseA,
              '/v1/chat',
              payer.cookie,
              turn('/tool mcp.box.echo {"text":"paid"}', ['mcp.box.echo']),
              EVENTS,
            ).response
          ).body,
        );
        expect(named(events, 'usage')[0].credits).toBe(2 + 3);
        const [entry] = (
          await a.http
            .get('/v1/billing/usage')
            .set('Cookie', payer.cookie)
            .expect(200)
        ).body.data as { toolCalls: { credits: number }[] }[];
        expect(entry.toolCalls).toEqual([
          expect.objectContaining({ status: 'ok', credits: 3 }),
        ]);
        expect(fake.executions('echo')).toBe(before + 1);

        // More than the day's credits: not run, the model is told, the run completes.
        await setPrices({ echo: 1000 }).expect(200);
        const refused = parseEvents(
          (
            await post(
              baseA,
              '/v1/chat',
              payer.cookie,
              turn('/tool mcp.box.echo {"text":"too dear"}', ['mcp.box.echo']),
              EVENTS,
            ).response
          ).body,
        );
        expect(named(refused, 'tool_result')).toEqual([
          expect.objectContaining({
            status: 'error',
            content: expect.stringContaining('credits cannot pay'),
          }),
        ]);
        expect(named(refused, 'done')).toEqual([{ status: 'completed' }]);
        expect(named(refused, 'usage')[0].credits).toBe(2);
        expect(fake.executions('echo')).toBe(before + 1);
      } finally {
        await setPrices({}).expect(200);
      }
    });

    it('ends with quota_exceeded when the credits run out between steps, billing what was used', async () => {
      const payer = await registerVerifiedUser(a.http, {
        databaseUrl: database.url,
      });
      const running = post(
        baseA,
        '/v1/chat',
        payer.cookie,
        turn('/tool mcp.box.slow {}', ['mcp.box.slow']),
        EVENTS,
      ).response;
      const before = fake.executions('slow');
      await eventually(() => fake.executions('slow') > before, LIVENESS_MS);
      // Another run of the same day spends the rest meanwhile.
      await query(
        `UPDATE "DailyUsage" SET used = 50 - reserved WHERE "userId" = $1`,
        [payer.id],
      );
      releaseSlow();
      const events = parseEvents((await running).body);
      expect(named(events, 'tool_result')).toEqual([
        expect.objectContaining({ status: 'ok', content: 'slow done' }),
      ]);
      expect(named(events, 'error')).toEqual([
        expect.objectContaining({ code: 'quota_exceeded' }),
      ]);
      expect(named(events, 'done')).toEqual([{ status: 'failed' }]);
      expect(named(events, 'usage')[0].credits).toBe(1);
      const [day] = await query<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM "DailyUsage" WHERE "userId" = $1`,
        [payer.id],
      );
      expect(day.reserved).toBe(0);
      const [entry] = await query<{ status: string; credits: number }>(
        `SELECT status::text, credits FROM "LedgerEntry" WHERE "userId" = $1`,
        [payer.id],
      );
      expect(entry).toEqual({ status: 'partial', credits: 1 });
    });
  });

  it('limits tool calls per user (RATE_LIMIT_TOOLS): a call over the limit is an error the model reads, not run', async () => {
    const limited = await bootTestApp({
      DATABASE_URL: database.url,
      MCP_ALLOWED_HOSTS: '127.0.0.1',
      RATE_LIMIT_TOOLS: '1/600',
    });
    try {
      const caller = await registerVerifiedUser(limited.http, {
        databaseUrl: database.url,
      });
      const base = await listen(limited);
      const results = [];
      const before = fake.executions('echo');
      for (const text of ['one', 'two'])
        results.push(
          named(
            parseEvents(
              (
                await post(
                  base,
                  '/v1/chat',
                  caller.cookie,
                  turn(`/tool mcp.box.echo {"text":"${text}"}`, [
                    'mcp.box.echo',
                  ]),
                  EVENTS,
                ).response
              ).body,
            ),
            'tool_result',
          )[0],
        );
      expect(results[0]).toMatchObject({ status: 'ok', content: 'echo: one' });
      expect(results[1]).toMatchObject({ status: 'error' });
      expect(String(results[1].content)).toMatch(/^Too many tool calls/);
      expect(fake.executions('echo')).toBe(before + 1);
    } finally {
      await limited.close();
    }
  });

  it('a server that hangs, answers garbage or is gone yields a tool error, never a stuck or failed run', async () => {
    const quick = await bootTestApp({
      DATABASE_URL: database.url,
      MCP_ALLOWED_HOSTS: '127.0.0.1',
      TOOL_TIMEOUT_MS: '500',
    });
    try {
      const base = await listen(quick);
      const result = async (content: string, tools: string[]) => {
        const events = parseEvents(
          (
            await post(
              base,
              '/v1/chat',
              user.cookie,
              turn(content, tools),
              EVENTS,
            ).response
          ).body,
        );
        expect(named(events, 'done')).toEqual([{ status: 'completed' }]);
        return named(events, 'tool_result')[0];
      };
      // Hangs: the `slow` tool answers only when released, which this test never does.
      expect(
        await result('/tool mcp.box.slow {}', ['mcp.box.slow']),
      ).toMatchObject({
        status: 'timeout',
      });
      releaseSlow();
      fake.broken = { status: 200, body: 'this is not JSON-RPC' };
      try {
        const garbage = await result('/tool mcp.box.echo {"text":"x"}', [
          'mcp.box.echo',
        ]);
        expect(garbage.status).toBe('error');
        expect(String(garbage.content)).not.toContain('JSON-RPC');
      } finally {
        fake.broken = undefined;
      }
    } finally {
      await quick.close();
    }
  });

  it('runs the built-in files.search with the caller as its owner', async () => {
    const events = parseEvents(
      (
        await send(
          baseA,
          turn('/tool files.search {"query":"nothing here"}', ['files.search']),
        )
      ).body,
    );
    const [result] = named(events, 'tool_result');
    expect(result).toMatchObject({ tool: 'files.search', status: 'ok' });
    expect(JSON.parse(String(result.content))).toEqual({ passages: [] });
  });

  it('a client joined on the other instance while a call is out gets the same events; the call runs once', async () => {
    const key = randomUUID();
    const body = turn('/tool mcp.box.slow {}', ['mcp.box.slow'], key);
    const slowBefore = fake.executions('slow');
    const first = send(baseA, body);
    await eventually(
      () => fake.executions('slow') === slowBefore + 1,
      LIVENESS_MS,
    );
    const joined = send(baseB, body);
    await new Promise((resolve) => setTimeout(resolve, 300));
    releaseSlow();
    const [original, follower] = await Promise.all([first, joined]);
    // Text may arrive in other pieces through the relay: consecutive deltas are compared joined.
    const strip = (events: ReceivedEvent[]) =>
      events
        .filter((event) => event.event !== 'meta')
        .reduce<ReceivedEvent[]>((merged, event) => {
          const last = merged.at(-1);
          if (event.event === 'delta' && last?.event === 'delta')
            last.data = {
              text: `${String(last.data.text)}${String(event.data.text)}`,
            };
          else merged.push({ ...event, data: { ...event.data } });
          return merged;
        }, []);
    expect(strip(parseEvents(follower.body))).toEqual(
      strip(parseEvents(original.body)),
    );
    expect(named(parseEvents(follower.body), 'tool_result')).toEqual([
      expect.objectContaining({ status: 'ok', content: 'slow done' }),
    ]);
    expect(fake.executions('slow')).toBe(slowBefore + 1);
  });

  it('binds tools to a Skill (owner only, ids checked): its runs offer them; export leaves them out', async () => {
    const skill = (
      await a.http
        .post('/v1/skills')
        .set('Cookie', user.cookie)
        .send({ name: 'Echoer', instruction: 'Use the tools.' })
        .expect(201)
    ).body;
    expect(skill.allowed_tools).toEqual([]);
    const bound = await a.http
      .put(`/v1/skills/${skill.id}/tools`)
      .set('Cookie', user.cookie)
      .send({ allowed_tools: ['mcp.box.echo', 'files.search'] })
      .expect(200);
    expect(bound.body).toMatchObject({
      id: skill.id,
      allowed_tools: ['mcp.box.echo', 'files.search'],
    });
    const shown = await a.http
      .get(`/v1/skills/${skill.id}`)
      .set('Cookie', user.cookie)
      .expect(200);
    expect(shown.body.allowed_tools).toEqual(['mcp.box.echo', 'files.search']);
    const exported = await a.http
      .get(`/v1/skills/${skill.id}/export`)
      .set('Cookie', user.cookie)
      .expect(200);
    expect(exported.body).not.toHaveProperty('allowed_tools');

    const refused = await a.http
      .put(`/v1/skills/${skill.id}/tools`)
      .set('Cookie', user.cookie)
      .send({ allowed_tools: ['files.search', 'mcp.box.gone'] })
      .expect(400);
    expect(refused.body.errors).toEqual([
      expect.objectContaining({ field: 'allowed_tools.1' }),
    ]);
    for (const body of [
      {},
      { allowed_tools: 'files.search' },
      { allowed_tools: [1] },
    ])
      await a.http
        .put(`/v1/skills/${skill.id}/tools`)
        .set('Cookie', user.cookie)
        .send(body)
        .expect(400);
    const stranger = await registerVerifiedUser(a.http, {
      databaseUrl: database.url,
    });
    await a.http
      .put(`/v1/skills/${skill.id}/tools`)
      .set('Cookie', stranger.cookie)
      .send({ allowed_tools: [] })
      .expect(404);

    const before = fake.executions('echo');
    const run = await post(
      baseA,
      `/v1/skills/${skill.id}/run`,
      user.cookie,
      {
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        input: '/tool mcp.box.echo {"text":"from a skill"}',
      },
      EVENTS,
    ).response;
    const events = parseEvents(run.body);
    expect(named(events, 'tool_result')).toEqual([
      expect.objectContaining({
        tool: 'mcp.box.echo',
        status: 'ok',
        content: 'echo: from a skill',
      }),
    ]);
    expect(fake.executions('echo')).toBe(before + 1);

    // Unbound: the Skill's runs offer nothing, and `/tool` is just text.
    await a.http
      .put(`/v1/skills/${skill.id}/tools`)
      .set('Cookie', user.cookie)
      .send({ allowed_tools: [] })
      .expect(200);
    const plain = parseEvents(
      (
        await post(
          baseA,
          `/v1/skills/${skill.id}/run`,
          user.cookie,
          {
            model: 'local/echo',
            idempotencyKey: randomUUID(),
            input: '/tool mcp.box.echo {"text":"x"}',
          },
          EVENTS,
        ).response
      ).body,
    );
    expect(named(plain, 'tool_call')).toEqual([]);
  });

  it('exports the calls with their answers', async () => {
    const events = parseEvents(
      (
        await send(
          baseA,
          turn('/tool mcp.box.echo {"text":"export me"}', ['mcp.box.echo']),
        )
      ).body,
    );
    const conversationId = named(events, 'meta')[0].conversationId as string;
    const [call] = named(events, 'tool_call');
    const doc = (
      await a.http
        .get('/v1/auth/me/export')
        .set('Cookie', user.cookie)
        .expect(200)
    ).body as {
      conversations: {
        id: string;
        messages: { role: string; toolCalls: unknown[] }[];
      }[];
    };
    const exported = doc.conversations.find(
      (conversation) => conversation.id === conversationId,
    );
    expect(exported?.messages.map((message) => message.toolCalls)).toEqual([
      [],
      [
        {
          id: call.id,
          tool: 'mcp.box.echo',
          arguments: { text: 'export me' },
          status: 'ok',
          content: 'echo: export me',
        },
      ],
    ]);
  });

  it('a call out when its run is swept (its instance died) ends unknown and is never recorded as anything else', async () => {
    const key = randomUUID();
    const slowBefore = fake.executions('slow');
    const running = send(
      baseA,
      turn('/tool mcp.box.slow {}', ['mcp.box.slow'], key),
    );
    await eventually(
      () => fake.executions('slow') === slowBefore + 1,
      LIVENESS_MS,
    );
    // What the sweeper does to a run whose instance stopped renewing its lease.
    await query(
      `UPDATE "ChatRequest" SET status = 'failed', "errorCode" = 'generation_interrupted', "finishedAt" = now()
        WHERE "userId" = $1 AND "idempotencyKey" = $2`,
      [user.id, key],
    );
    await b.app.get(ChatSweeperService).sweep();
    const [swept] = await query<{ status: string }>(
      `SELECT t.status FROM "ToolExecution" t JOIN "ChatRequest" r ON r.id = t."chatRequestId"
        WHERE r."idempotencyKey" = $1`,
      [key],
    );
    expect(swept.status).toBe('unknown');
    releaseSlow();
    await running;
    const [after] = await query<{ status: string }>(
      `SELECT t.status FROM "ToolExecution" t JOIN "ChatRequest" r ON r.id = t."chatRequestId"
        WHERE r."idempotencyKey" = $1`,
      [key],
    );
    expect(after.status).toBe('unknown');
    expect(fake.executions('slow')).toBe(slowBefore + 1);
  });

  it('sends the earlier calls back to the model in a later turn, and deleting the conversation removes them', async () => {
    const first = parseEvents(
      (
        await send(
          baseA,
          turn('/tool mcp.box.echo {"text":"remember"}', ['mcp.box.echo']),
        )
      ).body,
    );
    const conversationId = named(first, 'meta')[0].conversationId as string;
    const [call] = named(first, 'tool_call');
    const asked = (request: Record<string, unknown>) =>
      request.messages as Record<string, unknown>[];

    // OpenAI-compatible: the answer's calls as tool_calls, each result as a `tool` message.
    const second = await send(baseA, {
      ...turn('and now?', ['mcp.box.echo'], randomUUID(), conversationId),
      model: 'openai/gpt-4o-mini',
    });
    expect(second.status).toBe(200);
    const openai = model.requests.at(-1)!;
    expect(asked(openai)).toEqual([
      { role: 'user', content: '/tool mcp.box.echo {"text":"remember"}' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: call.id,
            type: 'function',
            function: {
              name: 'mcp_box_echo',
              arguments: '{"text":"remember"}',
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: call.id, content: 'echo: remember' },
      { role: 'assistant', content: 'Echo: Tool result: echo: remember' },
      { role: 'user', content: 'and now?' },
    ]);
    expect(openai.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        function: expect.objectContaining({ name: 'mcp_box_echo' }),
      }),
    ]);

    // Anthropic: tool_use blocks in the assistant turn, tool_result blocks in the next user turn.
    await query(`UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`, [
      user.id,
    ]);
    await eventually(
      async () =>
        (
          await send(baseA, {
            ...turn(
              'and then?',
              ['mcp.box.echo'],
              randomUUID(),
              conversationId,
            ),
            model: 'anthropic/claude-haiku-4-5',
          })
        ).status === 200,
      LIVENESS_MS,
    );
    const anthropic = asked(model.requests.at(-1)!);
    expect(anthropic.slice(0, 3)).toEqual([
      { role: 'user', content: '/tool mcp.box.echo {"text":"remember"}' },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: call.id,
            name: 'mcp_box_echo',
            input: { text: 'remember' },
          },
        ],
      },
      {
        role: 'user',
        content: [
          expect.objectContaining({
            type: 'tool_result',
            tool_use_id: call.id,
            content: 'echo: remember',
          }),
        ],
      },
    ]);
    // A turn without tools: the calls as text (Anthropic refuses tool blocks in a request without tools).
    expect(
      (
        await send(baseA, {
          ...turn('no tools now', undefined, randomUUID(), conversationId),
          model: 'anthropic/claude-haiku-4-5',
        })
      ).status,
    ).toBe(200);
    const plain = model.requests.at(-1)!;
    expect(plain.tools).toBeUndefined();
    expect(JSON.stringify(plain.messages)).not.toContain('tool_use');
    expect(asked(plain)[1]).toEqual({
      role: 'assistant',
      content: expect.stringContaining(
        'mcp.box.echo({"text":"remember"}) answered: echo: remember',
      ),
    });

    const [{ count }] = await query<{ count: string }>(
      `SELECT count(*) FROM "ToolExecution" WHERE "conversationId" = $1`,
      [conversationId],
    );
    expect(Number(count)).toBe(1);
    await a.http
      .delete(`/v1/conversations/${conversationId}`)
      .set('Cookie', user.cookie)
      .expect(204);
    const left = await query(
      `SELECT 1 FROM "ToolExecution" WHERE "conversationId" = $1`,
      [conversationId],
    );
    expect(left).toEqual([]);
  });
});
