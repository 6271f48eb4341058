import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './support/service-process';
import { bootTestApp, TestApp } from './support/test-app';

const node = (args: string[]) =>
  execFileSync(process.execPath, args, { cwd: ROOT, stdio: 'pipe' });

/**
 * The reference web client (web/): its typed API is generated from the service's OpenAPI document and
 * must not fall behind it, and the service serves the built client from its own origin.
 */
describe('the web client', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp({ WEB_CLIENT: 'on', API_DOCS: 'public' });
  }, 60_000);
  afterAll(async () => {
    await t.close();
  });

  describe('typed API (npm run web:api regenerates it)', () => {
    it('web/src/api/openapi.json is the document the service serves', async () => {
      const served = (await t.http.get('/docs-json').expect(200))
        .body as unknown;
      const committed = JSON.parse(
        readFileSync(join(ROOT, 'web/src/api/openapi.json'), 'utf8'),
      ) as unknown;
      // Out of date: run `npm run web:api` and commit web/src/api.
      expect(committed).toEqual(served);
    });

    it('web/src/api/schema.d.ts is what openapi-typescript makes of it', () => {
      const dir = mkdtempSync(join(tmpdir(), 'web-api-'));
      try {
        const output = join(dir, 'schema.d.ts');
        node([
          'node_modules/openapi-typescript/bin/cli.js',
          'web/src/api/openapi.json',
          '--output',
          output,
        ]);
        expect(
          readFileSync(join(ROOT, 'web/src/api/schema.d.ts'), 'utf8'),
        ).toBe(readFileSync(output, 'utf8'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('served at / on the API’s origin', () => {
    it('answers the page for / and for client routes, with the security headers, never cached', async () => {
      for (const path of ['/', '/chat', '/reset-password']) {
        const page = await t.http
          .get(path)
          .set('Accept', 'text/html,application/xhtml+xml')
          .expect(200);
        expect(page.headers['content-type']).toMatch(/^text\/html/);
        expect(page.text).toContain('<div id="root"></div>');
        expect(page.headers['cache-control']).toBe('no-cache');
        expect(page.headers['content-security-policy']).toContain(
          "script-src 'self'",
        );
      }
    });

    it('serves the hashed assets with a long cache', async () => {
      const page = await t.http.get('/').set('Accept', 'text/html').expect(200);
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
      expect(script).toBeDefined();
      const asset = await t.http.get(script!).expect(200);
      expect(asset.headers['content-type']).toMatch(/javascript/);
      expect(asset.headers['cache-control']).toBe(
        'public, max-age=31536000, immutable',
      );
    });

    it('leaves the API’s paths and non-HTML requests to the API', async () => {
      const api = await t.http
        .get('/v1/no-such-route')
        .set('Accept', 'text/html')
        .expect(404);
      expect(api.headers['content-type']).toMatch(
        /^application\/problem\+json/,
      );
      const json = await t.http
        .get('/no-such-page')
        .set('Accept', 'application/json')
        .expect(404);
      expect(json.headers['content-type']).toMatch(
        /^application\/problem\+json/,
      );
      await t.http
        .post('/chat')
        .set('Accept', 'text/html')
        .send({})
        .expect(404);
      expect(
        (await t.http.get('/v1/plans').expect(200)).body.data.length,
      ).toBeGreaterThan(0);
    });

    it('is not served with WEB_CLIENT=off', async () => {
      const off = await bootTestApp({ WEB_CLIENT: 'off' });
      try {
        await off.http.get('/').set('Accept', 'text/html').expect(404);
      } finally {
        await off.close();
      }
    });
  });
});
