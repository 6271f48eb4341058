import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '../scripts/lib/scratch-database';
import { sql } from './support/sql';
import { runRedisUrl } from './support/test-redis';
import { testServerUrl } from './support/test-database';
import {
  freePort,
  ROOT,
  ServiceProcess,
  StartOptions,
  startService,
} from './support/service-process';
import { chat, listen } from './support/chat-client';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { bootTestApp, extractionEnv } from './support/test-app';
import { eventually } from './support/eventually';
import { buildPdf } from './support/pdf';
import { FakeOtlpCollector, ReceivedSpan } from './support/fake-otlp-collector';

/**
 * The compiled service as operators run it (`npm run build`, then `npm run start:prod`): embedded
 * database on first and second start, graceful shutdown, refusal of bad configuration, two instances
 * starting together on one database.
 */
describe('the service process', () => {
  const running: ServiceProcess[] = [];
  const launch = (
    env: Record<string, string | undefined>,
    options: StartOptions = {},
  ) => {
    const service = startService(env, options);
    running.push(service);
    return service;
  };

  beforeAll(() => {
    execFileSync(
      process.execPath,
      ['node_modules/@nestjs/cli/bin/nest.js', 'build'],
      { cwd: ROOT, stdio: 'pipe' },
    );
  }, 120_000);
  afterAll(async () => {
    await Promise.all(running.map((service) => service.stop('SIGKILL')));
  });

  describe('with no DATABASE_URL (embedded PostgreSQL)', () => {
    // World-traversable parent: as root, embedded-postgres runs the server as the `postgres` user.
    const parent = mkdtempSync(join(tmpdir(), 'chat-embedded-'));
    chmodSync(parent, 0o755);
    const dataDir = join(parent, 'postgres');
    let pgPort: number;
    beforeAll(async () => {
      pgPort = await freePort();
    });
    afterAll(() => rmSync(parent, { recursive: true, force: true }));
    const env = async () => ({
      PORT: String(await freePort()),
      EMBEDDED_POSTGRES_DIR: dataDir,
      EMBEDDED_POSTGRES_PORT: String(pgPort),
    });
    const embeddedUrl = () =>
      `postgresql://postgres:postgres@127.0.0.1:${pgPort}/chat`;

    it('starts a real PostgreSQL, serves the plans and the docs, warns once about Redis, and stops it on SIGTERM', async () => {
      const service = launch(await env());
      await service.waitForLine(/chat api listening/);
      const plans = (await (
        await fetch(`http://127.0.0.1:${service.port}/v1/plans`)
      ).json()) as { data: { code: string }[] };
      expect(plans.data.map((plan: { code: string }) => plan.code)).toEqual([
        'free',
        'pro',
        'team',
        'enterprise',
      ]);
      expect(
        (await fetch(`http://127.0.0.1:${service.port}/docs-json`)).status,
      ).toBe(200);
      expect(
        service
          .lines()
          .filter((line) => /REDIS_URL is not set/.test(String(line.msg))),
      ).toHaveLength(1);

      await sql(
        `INSERT INTO "User" (id, email, "updatedAt") VALUES (gen_random_uuid(), 'marker@example.com', now())`,
        [],
        embeddedUrl(),
      );
      expect(await service.stop()).toBe(0);
      expect(service.output()).toContain('shutdown complete');
      await expect(sql('SELECT 1', [], embeddedUrl())).rejects.toThrow(
        /ECONNREFUSED/,
      );
    }, 60_000);

    it('reuses the same data on the next start', async () => {
      const service = launch(await env());
      await service.waitForLine(/chat api listening/);
      expect(
        service
          .lines()
          .find((line) => line.msg === 'database migrations up to date')
          ?.applied,
      ).toBe(0);
      const rows = await sql(
        `SELECT email FROM "User" WHERE email = 'marker@example.com'`,
        [],
        embeddedUrl(),
      );
      expect(rows.length).toBe(1);
      expect(await service.stop()).toBe(0);
    }, 60_000);

    it('lets an in-flight request finish after SIGTERM with the database still open, closing keep-alive connections', async () => {
      const service = launch(await env());
      await service.waitForLine(/chat api listening/);
      const socket = connect(service.port, '127.0.0.1');
      let response = '';
      socket.on('data', (chunk) => (response += chunk.toString()));
      const closed = new Promise((done) => socket.on('close', done));
      // GET /v1/plans reads the database: it proves the pool is still open while requests drain.
      const body = JSON.stringify({ hello: 'world' });
      await new Promise<void>((done) =>
        socket.write(
          `GET /v1/plans HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
          () => done(),
        ),
      );
      await new Promise((done) => setTimeout(done, 200));
      service.child.kill('SIGTERM');
      await service.waitForLine(/shutting down/);
      await expect(
        fetch(`http://127.0.0.1:${service.port}/v1/health/live`),
      ).rejects.toThrow();
      socket.write(body.slice(5));
      expect(await service.exited).toBe(0);
      await closed;
      expect(response).toMatch(/^HTTP\/1\.1 200 /);
      expect(response).toMatch(/\r\nConnection: close\r\n/i);
      expect(response).toContain('"code":"enterprise"');
    }, 60_000);

    it('shuts down cleanly on Ctrl-C in a terminal (SIGINT to the whole process group)', async () => {
      const service = launch({ ...(await env()) }, { detached: true });
      await service.waitForLine(/chat api listening/);
      process.kill(-service.child.pid!, 'SIGINT');
      expect(await service.exited).toBe(0);
      expect(service.output()).toContain('shutdown complete');
      await expect(sql('SELECT 1', [], embeddedUrl())).rejects.toThrow(
        /ECONNREFUSED/,
      );
    }, 60_000);

    it('stops the embedded database when SIGTERM arrives during startup', async () => {
      const service = launch(await env());
      await service.waitForLine(/starting the embedded PostgreSQL/);
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      expect(service.output()).not.toContain('chat api listening');
      await expect(sql('SELECT 1', [], embeddedUrl())).rejects.toThrow(
        /ECONNREFUSED/,
      );
      // And the next start is not blocked by a leftover server.
      const next = launch(await env());
      await next.waitForLine(/chat api listening/);
      expect(await next.stop()).toBe(0);
    }, 90_000);
  });

  it('`npm start` (nest start) compiles and serves the plans and the docs with no configuration', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'chat-npm-start-'));
    chmodSync(parent, 0o755);
    const env = {
      PORT: String(await freePort()),
      EMBEDDED_POSTGRES_DIR: join(parent, 'postgres'),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
    };
    const service = launch(env, {
      detached: true,
      args: ['node_modules/@nestjs/cli/bin/nest.js', 'start'],
    });
    try {
      await service.waitForLine(/chat api listening/, 90_000);
      const plans = (await (
        await fetch(`http://127.0.0.1:${service.port}/v1/plans`)
      ).json()) as { data: { code: string }[] };
      expect(plans.data.map((plan) => plan.code)).toEqual([
        'free',
        'pro',
        'team',
        'enterprise',
      ]);
      expect(
        (await fetch(`http://127.0.0.1:${service.port}/docs-json`)).status,
      ).toBe(200);
      process.kill(-service.child.pid!, 'SIGINT');
      await service.waitForLine(/shutdown complete/);
    } finally {
      await service.exited;
      rmSync(parent, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses to start with a bad variable, naming it', async () => {
    const service = launch({ PORT: 'eighty', LOG_LEVEL: 'chatty' });
    expect(await service.exited).toBe(1);
    expect(service.output()).toMatch(
      /Invalid configuration:\n {2}- PORT: must be an integer/,
    );
    expect(service.output()).toMatch(/LOG_LEVEL: must be one of/);
  }, 30_000);

  it('refuses to start in production without secrets, database and Redis', async () => {
    const service = launch({
      NODE_ENV: 'production',
      PORT: String(await freePort()),
    });
    expect(await service.exited).toBe(1);
    for (const name of [
      'SESSION_SECRET',
      'PASSWORD_PEPPER',
      'DATABASE_URL',
      'REDIS_URL',
    ])
      expect(service.output()).toContain(`${name}: is required`);
  }, 30_000);

  it('refuses to start with a malformed catalog, naming the entry', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'catalog-')), 'catalog.json');
    writeFileSync(
      file,
      JSON.stringify({ models: [{ id: 'local/echo' }], plans: [] }),
    );
    const service = launch({
      DATABASE_URL: process.env.TEST_DATABASE_URL,
      CATALOG_FILE: file,
      PORT: String(await freePort()),
    });
    expect(await service.exited).toBe(1);
    expect(service.output()).toContain(`Invalid catalog ${file}`);
    expect(service.output()).toContain('models[0] (local/echo).name');
  }, 30_000);

  it('starts two instances on one empty database at once: migrations and catalog applied once, both serve', async () => {
    const empty = await createScratchDatabase(testServerUrl(), 'chat_twin');
    try {
      const twins = [
        launch({ DATABASE_URL: empty.url, PORT: String(await freePort()) }),
        launch({ DATABASE_URL: empty.url, PORT: String(await freePort()) }),
      ];
      await Promise.all(
        twins.map((twin) => twin.waitForLine(/chat api listening/)),
      );
      for (const twin of twins) {
        const plans = (await (
          await fetch(`http://127.0.0.1:${twin.port}/v1/plans`)
        ).json()) as { data: unknown[] };
        expect(plans.data).toHaveLength(4);
      }
      const applied = await sql(
        'SELECT migration_name FROM "_prisma_migrations"',
        [],
        empty.url,
      );
      const appliedByTwins = twins.map(
        (twin) =>
          twin
            .lines()
            .find((line) => line.msg === 'database migrations up to date')
            ?.applied,
      );
      expect(appliedByTwins.sort()).toEqual([0, applied.length]);
      await Promise.all(twins.map((twin) => twin.stop()));
    } finally {
      await empty.drop();
    }
  }, 60_000);

  it('a run left streaming by a killed instance is failed by another instance’s sweeper, its reservation released', async () => {
    const fake = await new FakeModelServer().start();
    // The provider never finishes: the instance is killed mid-answer.
    fake.mode = {
      kind: 'ok',
      words: ['before', ' crash'],
      holdLast: new Promise<void>(() => undefined),
    };
    const survivor = await bootTestApp({
      CHAT_LEASE_MS: '5000',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
    });
    try {
      const doomed = launch({
        DATABASE_URL: process.env.TEST_DATABASE_URL,
        PORT: String(await freePort()),
        CHAT_LEASE_MS: '5000',
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseUrl,
      });
      await doomed.waitForLine(/chat api listening/);
      const doomedUrl = `http://127.0.0.1:${doomed.port}`;
      const user = await registerUser(survivor.http);
      const body = {
        model: 'openai/gpt-4o-mini',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'are you there?' }],
      };
      const call = chat(doomedUrl, user.cookie, body);
      expect(await call.firstChunk).toBe('before');
      await doomed.stop('SIGKILL');
      await call.response.catch(() => undefined);
      const [held] = await sql<{ reserved: number }>(
        `SELECT reserved FROM "DailyUsage" WHERE "userId" = $1`,
        [user.id],
      );
      expect(held.reserved).toBeGreaterThan(0);

      // The retry reaches the surviving instance, waits on the orphaned run and gets its failure once swept.
      const retry = await chat(await listen(survivor), user.cookie, body)
        .response;
      expect(retry.status).toBe(502);
      expect(JSON.parse(retry.body).code).toBe('generation_interrupted');
      const [usage] = await sql<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM "DailyUsage" WHERE "userId" = $1`,
        [user.id],
      );
      expect(usage).toEqual({ used: 0, reserved: 0 });
      expect(
        await sql(`SELECT 1 FROM "LedgerEntry" WHERE "userId" = $1`, [user.id]),
      ).toHaveLength(0);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await survivor.close();
      await fake.close();
    }
  }, 60_000);

  it('checks Skill JSON Schemas in its compiled worker thread', async () => {
    const service = launch({
      DATABASE_URL: process.env.TEST_DATABASE_URL,
      PORT: String(await freePort()),
    });
    await service.waitForLine(/chat api listening/);
    const url = `http://127.0.0.1:${service.port}`;
    const cookie = await signUp(url);
    const send = (path: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Cookie: cookie },
        body: JSON.stringify(body),
      });
    expect(
      (
        await send('/v1/skills', {
          name: 'S',
          instruction: 'I',
          input_schema: { type: 'strnig' },
        })
      ).status,
    ).toBe(400);
    const created = await send('/v1/skills', {
      name: 'S',
      instruction: 'I',
      input_schema: { type: 'object', required: ['text'] },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const refused = await send(`/v1/skills/${id}/run`, {
      model: 'local/echo',
      input: { other: 1 },
      idempotencyKey: randomUUID(),
    });
    expect(refused.status).toBe(422);
    const ran = await send(`/v1/skills/${id}/run`, {
      model: 'local/echo',
      input: { text: 'hi' },
      idempotencyKey: randomUUID(),
    });
    expect(ran.status).toBe(200);
    expect(await ran.text()).toBe('Echo: {"text":"hi"}');
    expect(await service.stop()).toBe(0);
  }, 60_000);

  it('extracts an uploaded file’s text in its compiled worker thread, and serves the bytes back', async () => {
    const service = launch({
      DATABASE_URL: process.env.TEST_DATABASE_URL,
      PORT: String(await freePort()),
      ...extractionEnv(),
    });
    await service.waitForLine(/chat api listening/);
    const url = `http://127.0.0.1:${service.port}`;
    const cookie = await signUp(url);
    const pdf = buildPdf(['Compiled extraction works']);
    const form = new FormData();
    form.append('file', new Blob([pdf]), 'compiled.pdf');
    const uploaded = await fetch(`${url}/v1/files`, {
      method: 'POST',
      headers: { Cookie: cookie },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    const { id } = (await uploaded.json()) as { id: string };
    let text: { status: string; chars: number } | undefined;
    await eventually(async () => {
      text = (
        (await (
          await fetch(`${url}/v1/files/${id}`, { headers: { Cookie: cookie } })
        ).json()) as { text: { status: string; chars: number } }
      ).text;
      return text.status !== 'pending';
    }, 20_000);
    expect(text).toEqual(
      expect.objectContaining({
        status: 'ready',
        chars: 'Compiled extraction works'.length,
      }),
    );
    const content = await fetch(`${url}/v1/files/${id}/content`, {
      headers: { Cookie: cookie },
    });
    expect(Buffer.from(await content.arrayBuffer()).equals(pdf)).toBe(true);
    expect(await service.stop()).toBe(0);
  }, 60_000);

  describe('OpenTelemetry traces', () => {
    const SPAN_KIND = { server: 2, client: 3 } as const;
    const probeDir = mkdtempSync(join(tmpdir(), 'otel-probe-'));
    afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

    /** NODE_OPTIONS that make the service write, as it exits, which @opentelemetry modules it had loaded. */
    function loadedModulesProbe(name: string): {
      env: Record<string, string>;
      read: () => string[];
    } {
      const out = join(probeDir, `${name}.json`);
      const script = join(probeDir, `${name}.js`);
      writeFileSync(
        script,
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache).filter((file) => file.includes('/node_modules/@opentelemetry/')).map((file) => file.split('/node_modules/')[1].split('/').slice(0, 2).join('/')))));\n`,
      );
      return {
        env: { NODE_OPTIONS: `--require ${script}` },
        read: () =>
          [
            ...new Set(JSON.parse(readFileSync(out, 'utf8')) as string[]),
          ].sort(),
      };
    }

    /** The spans of one trace, and each span's chain of ancestors by name. */
    function traceOf(spans: ReceivedSpan[], traceId: string) {
      const inTrace = spans.filter((span) => span.traceId === traceId);
      const byId = new Map(inTrace.map((span) => [span.spanId, span]));
      const ancestors = (span: ReceivedSpan): string[] => {
        const names: string[] = [];
        for (
          let parent = byId.get(span.parentSpanId);
          parent;
          parent = byId.get(parent.parentSpanId)
        )
          names.push(parent.name);
        return names;
      };
      return { spans: inTrace, ancestors };
    }

    it('exports one trace per chat request over OTLP/HTTP: inbound HTTP, Express and Nest, PostgreSQL, Redis, the provider call and the run’s spans; log lines carry the trace id', async () => {
      const collector = await new FakeOtlpCollector().start();
      const fake = await new FakeModelServer().start();
      fake.mode = { kind: 'ok', words: ['traced', ' answer'] };
      const probe = loadedModulesProbe('on');
      try {
        const service = launch({
          DATABASE_URL: process.env.TEST_DATABASE_URL,
          REDIS_URL: runRedisUrl(),
          PORT: String(await freePort()),
          OPENAI_API_KEY: 'sk-test',
          OPENAI_BASE_URL: fake.baseUrl,
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '100',
          OTEL_SERVICE_NAME: 'chat-api-under-test',
          ...probe.env,
        });
        await service.waitForLine(/chat api listening/);
        expect(
          service
            .lines()
            .find((line) => /OpenTelemetry tracing on/.test(String(line.msg))),
        ).toMatchObject({ endpoint: collector.endpoint });
        const url = `http://127.0.0.1:${service.port}`;
        const cookie = await signUp(url);
        expect((await fetch(`${url}/v1/health/ready`)).status).toBe(200);
        expect(
          (await fetch(`${url}/v1/plans?utm_source=secret-campaign`)).status,
        ).toBe(200);

        const res = await chat(url, cookie, {
          model: 'openai/gpt-4o-mini',
          idempotencyKey: randomUUID(),
          messages: [{ role: 'user', content: 'trace me' }],
        }).response;
        expect(res.status).toBe(200);
        expect(res.body).toBe('traced answer');
        const requestId = String(res.headers['x-request-id']);
        await eventually(
          () => collector.spans.some((span) => span.name === 'chat.settle'),
          15_000,
        );
        await service.waitForLine(
          new RegExp(`"requestId":"${requestId}".*request completed`),
        );

        const server = collector.spans.find(
          (span) =>
            span.kind === SPAN_KIND.server &&
            span.attributes['url.path'] === '/v1/chat' &&
            span.attributes['http.request.method'] === 'POST',
        );
        expect(server).toBeDefined();
        const { spans, ancestors } = traceOf(collector.spans, server!.traceId);
        expect(server!.parentSpanId).toBe('');
        expect(server!.name).toBe('POST /v1/chat');
        expect(server!.service).toBe('chat-api-under-test');
        const scopes = new Set(spans.map((span) => span.scope));
        for (const scope of [
          'instrumentation-http',
          'instrumentation-express',
          'instrumentation-nestjs-core',
          'instrumentation-pg',
          'instrumentation-undici',
          'chat-api',
        ]) {
          expect([...scopes].some((name) => name.endsWith(scope))).toBe(true);
        }
        expect(
          [...scopes].some((name) => name.endsWith('instrumentation-ioredis')),
        ).toBe(true);
        // The run's spans, each inside the request's trace; the provider call inside the generation.
        for (const name of [
          'chat.start',
          'chat.run',
          'chat.generate',
          'chat.settle',
        ]) {
          const span = spans.find((candidate) => candidate.name === name);
          expect({ name, found: span !== undefined }).toEqual({
            name,
            found: true,
          });
          expect(ancestors(span!)).toContain('POST /v1/chat');
        }
        const run = spans.find((span) => span.name === 'chat.run')!;
        expect(run.attributes).toMatchObject({
          'chat.model': 'openai/gpt-4o-mini',
          'gen_ai.system': 'openai',
          'chat.outcome': 'completed',
        });
        expect(
          spans.find((span) => span.name === 'chat.generate')!.events,
        ).toContain('first token');
        const upstream = spans.find(
          (span) =>
            span.scope.endsWith('instrumentation-undici') &&
            span.kind === SPAN_KIND.client,
        );
        expect(String(upstream!.attributes['url.full'])).toContain(
          new URL(fake.baseUrl).host,
        );
        expect(ancestors(upstream!)).toEqual(
          expect.arrayContaining([
            'chat.generate',
            'chat.run',
            'POST /v1/chat',
          ]),
        );
        const statements = spans.filter((span) =>
          span.scope.endsWith('instrumentation-pg'),
        );
        expect(statements.length).toBeGreaterThan(0);
        expect(
          statements.every((span) => ancestors(span).includes('POST /v1/chat')),
        ).toBe(true);

        // The request's log lines carry its trace id next to its request id.
        const access = service
          .lines()
          .find(
            (line) =>
              line.requestId === requestId && line.msg === 'request completed',
          );
        expect(access).toMatchObject({ traceId: server!.traceId });
        // Probes are not traced; the query string stays out of every span.
        expect(
          collector.spans.some((span) =>
            String(span.attributes['url.path'] ?? '').startsWith('/v1/health'),
          ),
        ).toBe(false);
        const plans = collector.spans.find(
          (span) =>
            span.kind === SPAN_KIND.server &&
            span.attributes['url.path'] === '/v1/plans',
        );
        expect(plans?.attributes['url.query']).toBe('REDACTED');
        expect(JSON.stringify(collector.spans)).not.toContain(
          'secret-campaign',
        );
        expect(JSON.stringify(collector.spans)).not.toContain('sk-test');

        expect(await service.stop()).toBe(0);
        // Traces only: no metrics or logs are pushed unless OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER ask for them.
        expect(new Set(collector.paths)).toEqual(new Set(['POST /v1/traces']));
        expect(probe.read()).toEqual(
          expect.arrayContaining([
            '@opentelemetry/sdk-node',
            '@opentelemetry/instrumentation-pg',
          ]),
        );
      } finally {
        await collector.close();
        await fake.close();
      }
    }, 60_000);

    it('without an OTLP endpoint loads no part of the SDK and logs no trace ids', async () => {
      const probe = loadedModulesProbe('off');
      const service = launch({
        DATABASE_URL: process.env.TEST_DATABASE_URL,
        PORT: String(await freePort()),
        ...probe.env,
      });
      await service.waitForLine(/chat api listening/);
      expect(
        (await fetch(`http://127.0.0.1:${service.port}/v1/plans`)).status,
      ).toBe(200);
      expect(await service.stop()).toBe(0);
      // The API package alone (its no-op tracer): no SDK, exporter or instrumentation.
      expect(probe.read()).toEqual(['@opentelemetry/api']);
      expect(service.lines().some((line) => 'traceId' in line)).toBe(false);
    }, 60_000);
  });
});

/** Registers a new account on a running service; answers its session cookie. */
async function signUp(url: string): Promise<string> {
  const register = await fetch(`${url}/v1/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      email: `process-${randomUUID()}@example.com`,
      password: 'correct horse battery staple',
    }),
  });
  return (register.headers.get('set-cookie') ?? '').split(';')[0];
}
