import { registerUser } from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

/** GET /v1/tools: what the caller may let a model use (docs/adr/0061-tools.md). */
describe('GET /v1/tools', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(() => t.close());

  it('lists the built-in files.search with its argument schema to a signed-in caller', async () => {
    const user = await registerUser(t.http);
    const res = await t.http
      .get('/v1/tools')
      .set('Cookie', user.cookie)
      .expect(200);
    expect(res.body.data).toEqual([
      {
        id: 'files.search',
        title: expect.any(String),
        description: expect.stringContaining('files'),
        inputSchema: expect.objectContaining({
          type: 'object',
          required: ['query'],
          properties: expect.objectContaining({
            query: expect.objectContaining({ type: 'string' }),
            fileIds: expect.objectContaining({ type: 'array' }),
          }),
        }),
        source: 'builtin',
        approval: 'auto',
        price: 0,
      },
    ]);
  });

  it('answers 401 without a session', async () => {
    const res = await t.http.get('/v1/tools').expect(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
