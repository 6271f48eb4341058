import { AddressInfo, connect } from 'node:net';
import { PASSWORD, uniqueEmail } from './support/factories';
import { ProbeModule } from './support/probe.module';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

const PROBLEM_JSON = /^application\/problem\+json/;
const validBody = {
  email: 'a@example.com',
  password: 'correct horse battery',
  count: 2,
  address: { city: 'Oslo' },
};

function expectProblem(
  res: {
    status: number;
    headers: Record<string, string>;
    body: Record<string, unknown>;
  },
  status: number,
  code: string,
) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
  expect(res.body).toEqual(
    expect.objectContaining({
      type: expect.stringMatching(/^urn:problem-type:/),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      code,
    }),
  );
  expect(res.body.requestId).toBe(res.headers['x-request-id']);
}

describe('HTTP plumbing: errors, request ids, logs, headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp({ BODY_LIMIT_BYTES: '65536' }, [ProbeModule]);
  });
  afterAll(() => t.close());

  it('accepts a valid body on a validated route', async () => {
    const res = await t.http.post('/v1/test-probe').send(validBody).expect(201);
    expect(res.body).toEqual({ ok: true, count: 2 });
  });

  it('answers 404 problem+json for an unknown route', async () => {
    const res = await t.http.get('/v1/nope');
    expectProblem(res, 404, 'route_not_found');
    expect(res.body.detail).toContain('/v1/nope');
  });

  it('answers 404 for paths outside /v1 too', async () => {
    expectProblem(await t.http.get('/plans'), 404, 'route_not_found');
  });

  it('answers 405 with Allow for a known path and a wrong method', async () => {
    const res = await t.http.delete('/v1/plans');
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
    const post = await t.http.post('/v1/health/live').send({});
    expectProblem(post, 405, 'method_not_allowed');
  });

  it('answers 400 malformed_json for a body that is not JSON, and changes nothing', async () => {
    const res = await t.http
      .post('/v1/test-probe')
      .set('Content-Type', 'application/json')
      .send('{"email": "a@example.com",');
    expectProblem(res, 400, 'malformed_json');
    // On a route that writes: a registration cut off mid-body creates no account and sets no cookie,
    // while the same body whole does.
    const email = uniqueEmail('malformed');
    const whole = JSON.stringify({ email, password: PASSWORD });
    const cut = await t.http
      .post('/v1/auth/register')
      .set('Content-Type', 'application/json')
      .send(whole.slice(0, -1));
    expectProblem(cut, 400, 'malformed_json');
    expect(cut.headers['set-cookie']).toBeUndefined();
    const accounts = () =>
      sql('SELECT 1 FROM "User" WHERE email = $1', [email.toLowerCase()]);
    expect(await accounts()).toHaveLength(0);
    await t.http
      .post('/v1/auth/register')
      .set('Content-Type', 'application/json')
      .send(whole)
      .expect(201);
    expect(await accounts()).toHaveLength(1);
  });

  it('answers 413 for a body over the limit', async () => {
    const res = await t.http
      .post('/v1/test-probe')
      .send({ ...validBody, padding: 'x'.repeat(70_000) });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('answers 400 naming every unknown field', async () => {
    const res = await t.http.post('/v1/test-probe').send({
      ...validBody,
      price: 1,
      role: 'admin',
      address: { city: 'Oslo', zip: '1' },
    });
    expectProblem(res, 400, 'validation_failed');
    const unknown = (res.body.errors as { field: string; code: string }[])
      .filter((e) => e.code === 'unknown_field')
      .map((e) => e.field);
    expect(unknown.sort()).toEqual(['address.zip', 'price', 'role']);
    expect(res.body.detail).toMatch(/price/);
  });

  it('answers 400 with one entry per invalid field', async () => {
    const res = await t.http.post('/v1/test-probe').send({
      email: 'not-an-email',
      password: 'short',
      count: 11,
      address: { city: 5 },
    });
    expectProblem(res, 400, 'validation_failed');
    const fields = new Set(
      (res.body.errors as { field: string }[]).map((e) => e.field),
    );
    expect([...fields].sort()).toEqual([
      'address.city',
      'count',
      'email',
      'password',
    ]);
    expect(JSON.stringify(res.body)).not.toContain('short'); // values are not echoed back
  });

  it('refuses a JSON body that is not an object as invalid, not as malformed', async () => {
    for (const body of ['[1,2]', 'null', '"text"', '42']) {
      const res = await t.http
        .post('/v1/test-probe')
        .set('Content-Type', 'application/json')
        .send(body);
      expectProblem(res, 400, 'validation_failed');
    }
  });

  it('answers 415 to form and text bodies (what a cross-site form can send)', async () => {
    const form = await t.http
      .post('/v1/test-probe')
      .type('form')
      .send('email=a@example.com&password=correct+horse+battery');
    expectProblem(form, 415, 'unsupported_media_type');
    const text = await t.http
      .post('/v1/test-probe')
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify(validBody));
    expectProblem(text, 415, 'unsupported_media_type');
    const latin1 = await t.http
      .post('/v1/test-probe')
      .set('Content-Type', 'application/json; charset=latin1')
      .send(JSON.stringify(validBody));
    expectProblem(latin1, 415, 'unsupported_media_type');
  });

  it('answers 415 to JSON declared in any charset but UTF-8, so UTF-7 cannot smuggle markup past checks', async () => {
    const body = JSON.stringify({
      ...validBody,
      email: '+ADw-script+AD4-@example.com',
    });
    for (const charset of [
      'utf-7',
      'UTF-16',
      'utf-16le',
      'utf-32',
      'iso-8859-1',
      '"utf-7"',
    ]) {
      const res = await t.http
        .post('/v1/test-probe')
        .set('Content-Type', `application/json; charset=${charset}`)
        .send(body);
      expectProblem(res, 415, 'unsupported_media_type');
      expect(res.body.detail).toMatch(/UTF-8/);
    }
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"']) {
      await t.http
        .post('/v1/test-probe')
        .set('Content-Type', `application/json; charset=${charset}`)
        .send(JSON.stringify(validBody))
        .expect(201);
    }
  });

  it('refuses deeply nested JSON with 400 instead of overflowing the stack', async () => {
    const deep = `{"email":"a@example.com","deep":${'{"x":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const res = await t.http
      .post('/v1/test-probe')
      .set('Content-Type', 'application/json')
      .send(deep);
    expectProblem(res, 400, 'bad_request');
    expect(res.body.detail).toMatch(/deeper than 32 levels/);
    const arrays = await t.http
      .post('/v1/test-probe')
      .set('Content-Type', 'application/json')
      .send(`${'['.repeat(3000)}${']'.repeat(3000)}`);
    expectProblem(arrays, 400, 'bad_request');
  });

  it('refuses NUL characters in strings and keys (PostgreSQL text cannot hold them)', async () => {
    expectProblem(
      await t.http
        .post('/v1/test-probe')
        .send({ ...validBody, password: 'correct horse\u0000battery' }),
      400,
      'bad_request',
    );
    expectProblem(
      await t.http
        .post('/v1/test-probe')
        .send({ ...validBody, address: { 'ci\u0000ty': 'x' } }),
      400,
      'bad_request',
    );
  });

  it('refuses lone UTF-16 surrogates, which no validator or database can take', async () => {
    for (const text of ['\\ud800x@b.co', 'x@\\udfffb.co']) {
      const res = await t.http
        .post('/v1/test-probe')
        .set('Content-Type', 'application/json')
        .send(
          `{"email":"${text}","password":"correct horse battery","count":2,"address":{"city":"x"}}`,
        );
      expectProblem(res, 400, 'bad_request');
    }
    const paired = await t.http
      .post('/v1/test-probe')
      .send({ ...validBody, address: { city: '😀' } });
    expect(paired.status).toBe(201);
  });

  it('caps the errors listed for a body with thousands of unknown fields', async () => {
    const extra = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`field${i}`, i]),
    );
    const res = await t.http
      .post('/v1/test-probe')
      .send({ ...validBody, ...extra });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors).toHaveLength(50);
    expect(res.body.detail).toMatch(/and 190 more\.$/);
  });

  it('answers requests the HTTP parser rejects with problem+json and a request id', async () => {
    const port = await listening(t);
    const oversized = await rawRequest(
      port,
      `GET /v1/plans HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(oversized).toMatch(/^HTTP\/1\.1 431 /);
    expect(oversized).toMatch(/x-request-id: [0-9a-f-]{36}/);
    expect(oversized).toContain('"code":"request_header_too_large"');
    const garbage = await rawRequest(port, 'GARBAGE\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect(garbage).toContain('application/problem+json');
  });

  it('renders unexpected errors as a generic 500 without internals', async () => {
    const res = await t.http.get('/v1/test-probe/crash');
    expectProblem(res, 500, 'internal_error');
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(
      /SELECT|password_hash|leak@example.com|secret\.ts|at Object/,
    );
    const line = t.logs.find(
      (entry) =>
        entry.requestId === res.headers['x-request-id'] &&
        entry.msg === 'unhandled error',
    );
    expect(line?.err).toEqual({
      type: 'Error',
      message: expect.stringMatching(/^SELECT password_hash/),
    });
    expect(JSON.stringify(line)).not.toMatch(/secret\.ts|at Object|stack/);
  });

  it('gives every response an x-request-id, echoing a well-formed incoming one', async () => {
    const own = await t.http.get('/v1/plans');
    expect(own.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await t.http
      .get('/v1/plans')
      .set('x-request-id', 'client-id-123');
    expect(echoed.headers['x-request-id']).toBe('client-id-123');
    const replaced = await t.http
      .get('/v1/plans')
      .set('x-request-id', 'bad id with spaces');
    expect(replaced.headers['x-request-id']).not.toBe('bad id with spaces');
    const malformed = await t.http
      .post('/v1/test-probe')
      .set('Content-Type', 'application/json')
      .send('{');
    expect(malformed.headers['x-request-id']).toBeTruthy();
  });

  it('logs structured JSON lines with the request id and never cookies, tokens or passwords', async () => {
    const secretPassword = 'hunter2-hunter2-hunter2';
    const res = await t.http
      .post('/v1/test-probe?token=query-secret-token&code=oauth-code-secret')
      .set('Cookie', 'sid=cookie-secret-value')
      .set('Authorization', 'Bearer bearer-secret-value')
      .send({ ...validBody, password: secretPassword });
    expect(res.status).toBe(201);
    await t.http
      .post('/v1/test-probe')
      .send({ ...validBody, password: secretPassword, unknown: 1 })
      .expect(400);
    const access = t.logs.find(
      (entry) =>
        entry.requestId === res.headers['x-request-id'] &&
        entry.msg === 'request completed',
    );
    expect(access).toEqual(
      expect.objectContaining({
        level: 'info',
        req: { method: 'POST', path: '/v1/test-probe' },
        res: { statusCode: 201 },
      }),
    );
    const raw = t.rawLogs();
    for (const secret of [
      secretPassword,
      'cookie-secret-value',
      'bearer-secret-value',
      'query-secret-token',
      'oauth-code-secret',
    ]) {
      expect(raw).not.toContain(secret);
    }
  });

  it('sets helmet security headers and no x-powered-by', async () => {
    const res = await t.http.get('/v1/plans');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBeDefined();
    expect(res.headers['content-security-policy']).toBeDefined();
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('gives API answers the headers a JSON API needs, and pages helmet’s whole set', async () => {
    const api = await t.http.get('/v1/plans');
    expect(api.headers['content-security-policy']).toBe(
      "default-src 'none';frame-ancestors 'none'",
    );
    expect(api.headers['x-frame-options']).toBe('DENY');
    expect(api.headers['referrer-policy']).toBe('no-referrer');
    expect(api.headers['cross-origin-resource-policy']).toBe('same-origin');
    // Document-only headers are left off JSON answers.
    for (const name of [
      'cross-origin-opener-policy',
      'origin-agent-cluster',
      'x-dns-prefetch-control',
      'x-download-options',
      'x-permitted-cross-domain-policies',
      'x-xss-protection',
    ])
      expect(api.headers[name]).toBeUndefined();
    // An unknown API path, a refused body and a path in capitals (Express routes case-insensitively) are
    // API answers too.
    for (const other of [
      await t.http.get('/v1/no-such-route').expect(404),
      await t.http
        .post('/v1/auth/login')
        .set('Content-Type', 'application/json')
        .send('{"email":')
        .expect(400),
      await t.http.get('/V1/plans').expect(200),
    ])
      expect(other.headers['content-security-policy']).toBe(
        "default-src 'none';frame-ancestors 'none'",
      );

    const page = await t.http.get('/docs').redirects(1).expect(200);
    expect(page.headers['content-security-policy']).toContain(
      "script-src 'self'",
    );
    expect(page.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(page.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    // Served over http here (APP_URL default): no upgrade-insecure-requests, or /docs would break.
    expect(page.headers['content-security-policy']).not.toContain(
      'upgrade-insecure-requests',
    );
  });

  it('asks browsers to upgrade insecure requests on its pages when the app is served over https', async () => {
    const secure = await bootTestApp({ APP_URL: 'https://chat.example.com' });
    try {
      const res = await secure.http.get('/docs').redirects(1).expect(200);
      expect(res.headers['content-security-policy']).toContain(
        'upgrade-insecure-requests',
      );
    } finally {
      await secure.close();
    }
  });

  it('answers CORS with credentials only to allowed origins', async () => {
    const allowed = await t.http
      .get('/v1/plans')
      .set('Origin', 'http://localhost:3000');
    expect(allowed.headers['access-control-allow-origin']).toBe(
      'http://localhost:3000',
    );
    expect(allowed.headers['access-control-allow-credentials']).toBe('true');
    const other = await t.http
      .get('/v1/plans')
      .set('Origin', 'https://evil.example');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(other.headers['access-control-allow-credentials']).toBeUndefined();
    const preflight = await t.http
      .options('/v1/auth/login')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(
      preflight.headers['access-control-allow-credentials'],
    ).toBeUndefined();
  });
});

async function listening(t: TestApp): Promise<number> {
  const server = t.app.getHttpServer();
  if (!server.listening)
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((done, fail) => {
    let response = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (chunk) => (response += chunk.toString()));
    socket.on('end', () => done(response));
    socket.on('error', (error) => (response ? done(response) : fail(error)));
  });
}
