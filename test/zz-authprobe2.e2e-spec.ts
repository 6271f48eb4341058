import { bootTestApp, TestApp } from './support/test-app';
import { sql } from './support/sql';
import { PASSWORD } from './support/factories';
describe('p2', () => {
  let t: TestApp;
  beforeAll(async () => { t = await bootTestApp(); });
  afterAll(() => t.close());
  it('surrogate', async () => {
    const out: string[] = [];
    for (const email of ['\ud800x@b.co', 'x@\ud800b.co', '\udfffy@b.co']) {
      const r = await t.http.post('/v1/auth/register').set('Content-Type','application/json').send(JSON.stringify({ email, password: PASSWORD }));
      out.push(`${JSON.stringify(email)} ${r.status} ${JSON.stringify(r.body)}`);
    }
    // login for a stored replacement-char email
    const rows = await sql(`SELECT email FROM "User" WHERE email LIKE '%b.co'`);
    out.push(JSON.stringify(rows));
    out.push(t.logs.filter((l) => l.level === 'error').map((l) => JSON.stringify(l)).join('\n'));
    require('fs').writeFileSync('/tmp/probe/out2.txt', out.join('\n'));
  });
});
