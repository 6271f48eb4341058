import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as ts from 'typescript';
import { bootTestApp, TestApp } from './support/test-app';
import { runRedisUrl } from './support/test-redis';

/** Every class declared in the application's own sources (the generated Prisma client left out), by name, with the files declaring it. */
function classesOfSources(
  dir = resolve(__dirname, '..', 'src'),
): Map<string, string[]> {
  const classes = new Map<string, string[]>();
  for (const entry of readdirSync(dir, {
    withFileTypes: true,
    recursive: true,
  })) {
    const path = join(entry.parentPath, entry.name);
    if (
      !entry.isFile() ||
      !entry.name.endsWith('.ts') ||
      entry.name.endsWith('.d.ts') ||
      path.includes(`${join('prisma', 'generated')}`)
    )
      continue;
    const source = ts.createSourceFile(
      path,
      readFileSync(path, 'utf8'),
      ts.ScriptTarget.Latest,
    );
    const visit = (node: ts.Node): void => {
      if (
        (ts.isClassDeclaration(node) || ts.isClassExpression(node)) &&
        node.name
      )
        classes.set(node.name.text, [
          ...(classes.get(node.name.text) ?? []),
          path,
        ]);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return classes;
}

interface OpenApiOperation {
  responses: Record<string, { content?: Record<string, unknown> }>;
  security?: unknown[];
}

describe('API docs', () => {
  let t: TestApp;
  let doc: {
    openapi: string;
    paths: Record<string, Record<string, OpenApiOperation>>;
    components: {
      securitySchemes: Record<string, unknown>;
      schemas: Record<string, unknown>;
    };
  };
  beforeAll(async () => {
    t = await bootTestApp();
    doc = (await t.http.get('/docs-json').expect(200)).body;
  });
  afterAll(() => t.close());

  it('serves Swagger UI at /docs', async () => {
    const res = await t.http.get('/docs').redirects(1).expect(200);
    expect(res.text).toContain('swagger-ui');
  });

  it('is an OpenAPI 3 document generated from the code, with the cookie scheme and problem schema', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes.session).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'cookie' }),
    );
    expect(doc.components.schemas.ProblemDetailsDto).toBeDefined();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/plans',
        '/v1/health/live',
        '/v1/health/ready',
      ]),
    );
    const plans = doc.paths['/v1/plans'].get;
    const planSchema = doc.components.schemas.PlanDto as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(planSchema.properties).sort()).toEqual([
      'checkoutAllowed',
      'code',
      'dailyCredits',
      'id',
      'models',
      'name',
      'price',
    ]);
    expect(plans.responses['200'].content?.['application/json']).toBeDefined();
  });

  it('documents on every operation the answers any request can meet (400, 413, 415, 500, 503; 403 for writes; 304 for JSON reads)', () => {
    for (const operations of Object.values(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const statuses = Object.keys(operation.responses);
        expect(statuses).toEqual(
          expect.arrayContaining(['400', '413', '415', '500', '503']),
        );
        if (['post', 'put', 'patch', 'delete'].includes(method))
          expect(statuses).toContain('403');
        if (
          method === 'get' &&
          operation.responses['200']?.content?.['application/json']
        )
          expect(statuses).toContain('304');
      }
    }
    const notReady = doc.paths['/v1/health/ready'].get.responses['503']
      .content?.['application/problem+json'] as {
      schema: { allOf: unknown[] };
    };
    expect(JSON.stringify(notReady.schema.allOf)).toContain(
      'ReadinessChecksDto',
    );
  });

  it('documents every auth endpoint with its cookie, 401/409/429 answers and Retry-After', () => {
    const op = (path: string, method = 'post') =>
      doc.paths[path]?.[method] as OpenApiOperation & {
        responses: Record<string, { headers?: Record<string, unknown> }>;
      };
    for (const path of [
      '/v1/auth/register',
      '/v1/auth/login',
      '/v1/auth/logout',
      '/v1/auth/forgot-password',
      '/v1/auth/reset-password',
    ])
      expect(op(path)).toBeDefined();
    for (const path of [
      '/v1/auth/me',
      '/v1/auth/google',
      '/v1/auth/google/callback',
      '/v1/auth/github',
      '/v1/auth/github/callback',
    ])
      expect(op(path, 'get')).toBeDefined();
    expect(Object.keys(op('/v1/auth/login').responses)).toEqual(
      expect.arrayContaining(['200', '401', '429']),
    );
    expect(Object.keys(op('/v1/auth/register').responses)).toEqual(
      expect.arrayContaining(['201', '409', '429']),
    );
    expect(
      op('/v1/auth/login').responses['429'].headers?.['Retry-After'],
    ).toBeDefined();
    expect(
      op('/v1/auth/login').responses['200'].headers?.['Set-Cookie'],
    ).toBeDefined();
    expect(Object.keys(op('/v1/auth/me', 'get').responses)).toEqual(
      expect.arrayContaining(['200', '401']),
    );
    expect(op('/v1/auth/me', 'get').security).toBeUndefined(); // the global cookie requirement applies
    expect(op('/v1/auth/login').security).toEqual([{}]); // public
  });

  it('documents the chat stream, its headers and refusals, and the usage list', () => {
    const chat = doc.paths['/v1/chat'].post as OpenApiOperation & {
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    expect(chat.responses['200'].content?.['text/plain']).toBeDefined();
    expect(Object.keys(chat.responses['200'].headers ?? {})).toEqual(
      expect.arrayContaining(['x-conversation-id', 'Idempotent-Replayed']),
    );
    expect(Object.keys(chat.responses)).toEqual(
      expect.arrayContaining([
        '401',
        '403',
        '404',
        '413',
        '422',
        '429',
        '502',
        '503',
      ]),
    );
    expect(chat.responses['429'].headers?.['Retry-After']).toBeDefined();
    const body = doc.components.schemas.ChatRequestDto as {
      required: string[];
      properties: Record<string, unknown>;
    };
    expect(body.required.sort()).toEqual([
      'idempotencyKey',
      'messages',
      'model',
    ]);
    expect(Object.keys(doc.paths['/v1/billing/usage'].get.responses)).toEqual(
      expect.arrayContaining(['200', '401']),
    );
    expect(
      doc.paths['/v1/conversations/{id}'].get.responses['404'],
    ).toBeDefined();
  });

  it('names every schema after exactly one class: two classes of one name would share (and corrupt) one schema', () => {
    const classes = classesOfSources();
    const collisions = Object.keys(doc.components.schemas)
      .filter((name) => (classes.get(name)?.length ?? 0) > 1)
      .map((name) => `${name}: ${classes.get(name)?.join(', ')}`);
    expect(collisions).toEqual([]);
    // And the check sees the sources: every DTO schema has its class.
    for (const name of [
      'ConversationDto',
      'ConversationMessageDto',
      'MessageDto',
      'ChatRequestDto',
    ])
      expect(classes.get(name)).toHaveLength(1);
  });

  it('documents conversations and streams: rename, archive, delete, search, stop, regenerate, edit and the event stream', () => {
    const conversation = doc.components.schemas.ConversationDto as {
      properties: Record<string, { items?: { $ref: string } }>;
    };
    expect(conversation.properties.messages.items?.$ref).toBe(
      '#/components/schemas/ConversationMessageDto',
    );
    const message = doc.components.schemas.ConversationMessageDto as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(message.properties)).toEqual(
      expect.arrayContaining([
        'id',
        'parentId',
        'role',
        'content',
        'alternatives',
        'usage',
        'files',
      ]),
    );
    expect(Object.keys(doc.paths['/v1/conversations/{id}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
    const list = doc.paths['/v1/conversations'].get as OpenApiOperation & {
      parameters: { name: string }[];
    };
    expect(list.parameters.map((parameter) => parameter.name)).toEqual(
      expect.arrayContaining(['q', 'archived', 'limit', 'cursor']),
    );
    expect(doc.paths['/v1/chat/stop'].post.responses['200']).toBeDefined();
    for (const path of [
      '/v1/chat',
      '/v1/skills/{id}/run',
      '/v1/conversations/{id}/regenerate',
      '/v1/conversations/{id}/messages/{messageId}/edit',
    ]) {
      // The stream is a string; each event is described by x-itemSchema (OpenAPI 3.2's itemSchema).
      const events = doc.paths[path].post.responses['200'].content?.[
        'text/event-stream'
      ] as {
        schema: { type: string };
        'x-itemSchema': { oneOf: { $ref: string }[] };
      };
      expect(events.schema.type).toBe('string');
      expect(
        events['x-itemSchema'].oneOf.map((ref) => ref.$ref.split('/').pop()),
      ).toEqual([
        'ChatMetaEventDto',
        'ChatDeltaEventDto',
        'ChatToolCallEventDto',
        'ChatToolApprovalEventDto',
        'ChatToolResultEventDto',
        'ChatErrorEventDto',
        'ChatUsageEventDto',
        'ChatDoneEventDto',
      ]);
    }
    for (const name of [
      'ChatMetaEventDto',
      'ChatDeltaEventDto',
      'ChatErrorEventDto',
      'ChatUsageEventDto',
      'ChatDoneEventDto',
    ])
      expect(doc.components.schemas[name]).toBeDefined();
  });

  it('documents the skills group, its streamed run and the portable import shape', () => {
    const paths = [
      '/v1/skills',
      '/v1/skills/templates',
      '/v1/skills/templates/{id}/duplicate',
      '/v1/skills/import',
      '/v1/skills/{id}',
      '/v1/skills/{id}/export',
      '/v1/skills/{id}/versions',
      '/v1/skills/{id}/run',
    ];
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(paths));
    const run = doc.paths['/v1/skills/{id}/run'].post;
    expect(run.responses['200'].content?.['text/plain']).toBeDefined();
    expect(Object.keys(run.responses)).toEqual(
      expect.arrayContaining(['404', '422', '429', '502']),
    );
    const importShape = doc.components.schemas.ImportSkillDto as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(importShape.properties).sort()).toEqual([
      'input_schema',
      'instruction',
      'name',
      'output_schema',
      'version',
    ]);
    const exportShape = doc.components.schemas.SkillExportDto as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(exportShape.properties).sort()).toEqual([
      'input_schema',
      'instruction',
      'name',
      'output_schema',
      'version',
    ]);
  });

  it('documents the files group: multipart upload, list and delete', () => {
    const upload = doc.paths['/v1/files'].post as OpenApiOperation & {
      requestBody: { content: Record<string, unknown> };
    };
    expect(upload.requestBody.content['multipart/form-data']).toBeDefined();
    expect(Object.keys(upload.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '413', '415', '503']),
    );
    expect(doc.paths['/v1/files'].get.responses['200']).toBeDefined();
    expect(Object.keys(doc.paths['/v1/files/{id}'].delete.responses)).toEqual(
      expect.arrayContaining(['204', '404', '503']),
    );
  });

  it('documents every error status it declares as problem+json', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) >= 400) {
            expect({
              path,
              method,
              status,
              types: Object.keys(response.content ?? {}),
            }).toEqual({
              path,
              method,
              status,
              types: ['application/problem+json'],
            });
          }
        }
      }
    }
  });

  it('passes the standard OpenAPI linter (Redocly recommended) with no errors', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const lint = spawnSync(
      process.execPath,
      [resolve(__dirname, '..', 'scripts', 'lint-openapi.mjs'), file],
      { encoding: 'utf8' },
    );
    const summary = lint.stdout.trim().split('\n').pop() ?? '';
    expect({ exit: lint.status, summary, stderr: lint.stderr }).toEqual({
      exit: 0,
      summary: expect.stringContaining('"errors":0'),
      stderr: '',
    });
  });
});

describe('API docs in production', () => {
  // Production refuses to start without its secrets and a shared Redis: the test names each one.
  const production = {
    NODE_ENV: 'production',
    SESSION_SECRET: 'p'.repeat(40),
    PASSWORD_PEPPER: 'q'.repeat(40),
    REDIS_URL: runRedisUrl(),
  };

  it('are off by default: /docs and /docs-json answer 404 and name no route', async () => {
    const t = await bootTestApp(production);
    try {
      for (const path of ['/docs', '/docs/', '/docs-json', '/docs-yaml']) {
        const res = await t.http.get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expect(res.text).not.toMatch(/admin|webhooks/);
      }
      await t.http.get('/v1/plans').expect(200);
    } finally {
      await t.close();
    }
  });

  it('are served with API_DOCS=public, and can be turned off in development with API_DOCS=off', async () => {
    const published = await bootTestApp({ ...production, API_DOCS: 'public' });
    try {
      await published.http.get('/docs-json').expect(200);
    } finally {
      await published.close();
    }
    const hidden = await bootTestApp({ API_DOCS: 'off' });
    try {
      await hidden.http.get('/docs-json').expect(404);
    } finally {
      await hidden.close();
    }
  });
});
