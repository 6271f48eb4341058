import { bootTestApp, TestApp } from './support/test-app';
import { uniqueEmail } from './support/factories';
describe('p3', () => {
  let t: TestApp;
  beforeAll(async () => { t = await bootTestApp({ TRUST_PROXY: 'loopback', RATE_LIMIT_LOGIN_IP: '2/60' }); });
  afterAll(() => t.close());
  it('x', async () => {
    const out: string[] = [];
    const doc = (await t.http.get('/docs-json')).body;
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      if (!p.startsWith('/v1/auth')) continue;
      for (const [m, op] of Object.entries<any>(item)) out.push(`${m} ${p} sec=${JSON.stringify(op.security)} responses=${Object.keys(op.responses).join(',')} 429hdr=${!!op.responses['429']?.headers?.['Retry-After']}`);
    }
    out.push('UserDto ' + JSON.stringify(doc.components.schemas.UserDto));
    out.push('securitySchemes ' + JSON.stringify(doc.components.securitySchemes));
    const c = await t.http.options('/v1/auth/login').set('Origin', 'https://evil.example').set('Access-Control-Request-Method', 'POST');
    out.push('preflight evil ' + c.status + ' ' + JSON.stringify({ acao: c.headers['access-control-allow-origin'], acac: c.headers['access-control-allow-credentials'] }));
    const d = await t.http.get('/v1/auth/me').set('Origin', 'https://evil.example');
    out.push('GET evil ' + JSON.stringify({ acao: d.headers['access-control-allow-origin'], acac: d.headers['access-control-allow-credentials'] }));
    const statuses: number[] = [];
    for (let i = 1; i <= 5; i++) statuses.push((await t.http.post('/v1/auth/login').set('X-Forwarded-For', `2001:db8:1:2::${i}`).send({ email: uniqueEmail(), password: 'whatever password' })).status);
    out.push('ipv6 rotation within one /64 with limit 2: ' + statuses.join(','));
    require('fs').writeFileSync('/tmp/probe/out3.txt', out.join('\n'));
  });
});
