import { randomUUID } from 'node:crypto';
import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import { billingEnv } from './support/billing';
import {
  PASSWORD,
  sessionCookie,
  uniqueEmail,
  registerVerifiedUser,
} from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

/**
 * Every operation of the OpenAPI document, as a signed-in admin, with malformed input: bodies of the wrong
 * shape, every body field replaced by wrong types, nested arrays, nulls, huge strings, bad numbers; bad
 * path ids and query values. None may answer 5xx or leak internals. The operations come from the document,
 * so a new route is covered without touching this test.
 */

type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
};
type Parameter = {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  schema?: Schema;
};
type Operation = {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
};
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

const HUGE = 'x'.repeat(200_000);
/** Values that are wrong for nearly every field (one of them may happen to be right for some: that is fine). */
const BAD_VALUES: unknown[] = [
  null,
  [],
  [[]],
  [[{}]],
  [null],
  {},
  { a: { b: [] } },
  '',
  ' ',
  HUGE,
  'not-a-uuid',
  -1,
  0,
  1.5,
  1e308,
  -1e308,
  true,
  '\u202e\ud83d\ude00',
  '<script>',
  "' OR 1=1 --",
];
/** Whole bodies of the wrong shape. */
const BAD_BODIES: unknown[] = [[], [[]], [{}], null, 'text', 123, true, {}];
const BAD_PATH_VALUES = [
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  'x'.repeat(2_000),
  '%E2%80%AE',
  '..%2F..%2Fetc',
  '-1',
  '1e999',
];
const BAD_QUERY_VALUES = [
  '-1',
  '0',
  '1e999',
  'NaN',
  'abc',
  '',
  'x'.repeat(5_000),
  '2026-13-45',
  '[]',
  '{"a":1}',
];

function resolveSchema(
  doc: Document,
  schema: Schema | undefined,
  depth = 0,
): Schema {
  if (!schema || depth > 8) return {};
  if (schema.$ref)
    return resolveSchema(
      doc,
      doc.components.schemas[schema.$ref.split('/').pop() as string],
      depth + 1,
    );
  const combined = schema.allOf ?? schema.oneOf ?? schema.anyOf;
  if (combined && combined.length > 0)
    return resolveSchema(doc, combined[0], depth + 1);
  return schema;
}

/** A plausible value for a schema: the base the bad values are put into, one field at a time. */
function sample(doc: Document, raw: Schema | undefined, depth = 0): unknown {
  const schema = resolveSchema(doc, raw);
  if (depth > 4) return null;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return schema.format === 'uuid'
        ? randomUUID()
        : schema.format === 'email'
          ? uniqueEmail('fuzz')
          : schema.format === 'date'
            ? '2026-01-01'
            : 'sample text';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [sample(doc, schema.items, depth + 1)];
    default: {
      if (!schema.properties) return {};
      return Object.fromEntries(
        Object.entries(schema.properties).map(([name, property]) => [
          name,
          sample(doc, property, depth + 1),
        ]),
      );
    }
  }
}

/** The bodies to send: wrong shapes, then each field (and each field of a nested object or array item) made bad. */
function badBodies(doc: Document, raw: Schema | undefined): unknown[] {
  const schema = resolveSchema(doc, raw);
  const base = sample(doc, schema) as Record<string, unknown>;
  const bodies: unknown[] = [...BAD_BODIES];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    for (const value of BAD_VALUES) bodies.push({ ...base, [name]: value });
    const resolved = resolveSchema(doc, property);
    const nested =
      resolved.type === 'array' ? resolveSchema(doc, resolved.items) : resolved;
    for (const [inner] of Object.entries(nested.properties ?? {})) {
      const item = sample(doc, nested) as Record<string, unknown>;
      for (const value of BAD_VALUES) {
        const bad = { ...item, [inner]: value };
        bodies.push({
          ...base,
          [name]: resolved.type === 'array' ? [bad] : bad,
        });
      }
    }
  }
  return bodies;
}

describe('Malformed input on every operation of the OpenAPI document', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  let paddle: FakePaddle;
  let doc: Document;
  let admin: { email: string; cookie: string };
  const failures: string[] = [];
  let requests = 0;

  beforeAll(async () => {
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    const adminEmail = uniqueEmail('fuzz-admin');
    // Limits high enough that every malformed request reaches validation.
    const unlimited = {
      RATE_LIMIT_RUN_USER: '100000/60',
      RATE_LIMIT_UPLOAD_USER: '100000/60',
      RATE_LIMIT_SKILL_WRITE_USER: '100000/60',
    };
    t = await bootTestApp({
      ...billingEnv(stripe, paddle),
      ...unlimited,
      ADMIN_EMAILS: adminEmail,
    });
    const registered = await registerVerifiedUser(t.http, {
      email: adminEmail,
    });
    admin = { email: adminEmail, cookie: registered.cookie };
    doc = (await t.http.get('/docs-json').expect(200)).body as Document;
  });
  afterAll(async () => {
    await t.close();
    await stripe.close();
    await paddle.close();
  });

  /** Signs in again when an operation (logout) ended the session, so the next ones are judged signed in. */
  async function ensureSignedIn(): Promise<void> {
    const me = await t.http.get('/v1/auth/me').set('Cookie', admin.cookie);
    if (me.status === 200) return;
    const login = await t.http
      .post('/v1/auth/login')
      .send({ email: admin.email, password: PASSWORD })
      .expect(200);
    admin.cookie = sessionCookie(login);
  }

  async function send(
    method: string,
    path: string,
    body?: unknown,
    query?: Record<string, string>,
  ): Promise<void> {
    requests += 1;
    let req = t.http[method as 'post'](path)
      .set('Cookie', admin.cookie)
      .set('Idempotency-Key', randomUUID());
    if (query) req = req.query(query);
    const res =
      body === undefined
        ? await req
        : await req
            .set('Content-Type', 'application/json')
            .send(JSON.stringify(body));
    const text = res.text ?? '';
    const leak =
      /\bat \S+ \(|node_modules|prisma|SELECT |INSERT |TypeError|ReferenceError/i.exec(
        text,
      );
    if (res.status >= 500 || leak) {
      failures.push(
        `${method.toUpperCase()} ${path}${query ? ` ?${JSON.stringify(query)}` : ''} ${JSON.stringify(body)?.slice(0, 200)} -> ${res.status} ${text.slice(0, 300)}`,
      );
    }
  }

  function operations(): {
    method: string;
    path: string;
    operation: Operation;
  }[] {
    const list = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) =>
          ['get', 'post', 'put', 'patch', 'delete'].includes(method),
        )
        .map(([method, operation]) => ({ method, path, operation })),
    );
    // Ending the session is tried last; ensureSignedIn covers the rest.
    return list.sort(
      (a, b) =>
        Number(a.path.includes('logout')) - Number(b.path.includes('logout')),
    );
  }

  function concretePath(path: string, value: string = randomUUID()): string {
    return path.replace(/\{[^}]+\}/g, () => value);
  }

  it('answers every malformed body with a 4xx, never a 5xx or internals', async () => {
    for (const { method, path, operation } of operations()) {
      const schema =
        operation.requestBody?.content?.['application/json']?.schema;
      if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
      await ensureSignedIn();
      const bodies = schema ? badBodies(doc, schema) : BAD_BODIES;
      for (const body of bodies) await send(method, concretePath(path), body);
    }
    expect(requests).toBeGreaterThan(1_000);
    expect(failures).toEqual([]);
  }, 300_000);

  it('answers bad path ids and query values with a 4xx, never a 5xx or internals', async () => {
    for (const { method, path, operation } of operations()) {
      await ensureSignedIn();
      const schema =
        operation.requestBody?.content?.['application/json']?.schema;
      const body = schema ? sample(doc, schema) : undefined;
      if (path.includes('{'))
        for (const value of BAD_PATH_VALUES)
          await send(method, concretePath(path, value), body);
      for (const parameter of (operation.parameters ?? []).filter(
        (p) => p.in === 'query',
      )) {
        for (const value of BAD_QUERY_VALUES)
          await send(method, concretePath(path), body, {
            [parameter.name]: value,
          });
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
