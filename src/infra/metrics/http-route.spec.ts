import { RouteTemplates, UNMATCHED_ROUTE } from './http-route';

/** A router layer as Express 5 has it: the route's path and methods, and a matcher. */
function layer(path: string, methods: string[], pattern: RegExp) {
  return {
    route: {
      path,
      methods: Object.fromEntries(methods.map((method) => [method, true])),
    },
    match: (url: string) => pattern.test(url),
  };
}

const stack = [
  { match: () => true },
  layer('/v1/chat', ['post'], /^\/v1\/chat\/?$/),
  layer(
    '/v1/conversations/:id',
    ['get', 'patch'],
    /^\/v1\/conversations\/[^/]+\/?$/,
  ),
  layer('/v1/skills/:id/run', ['post'], /^\/v1\/skills\/[^/]+\/run\/?$/),
];

describe('RouteTemplates', () => {
  const templates = new RouteTemplates(() => stack);

  it('answers the route Express matched, without looking anything up', () => {
    const lookups = jest.fn(() => stack);
    const req = {
      method: 'GET',
      originalUrl: '/v1/conversations/0190a4b2-1111-7000-8000-000000000000?x=1',
      route: { path: '/v1/conversations/:id' },
    };
    expect(new RouteTemplates(lookups).of(req, 200)).toBe(
      '/v1/conversations/:id',
    );
    expect(lookups).not.toHaveBeenCalled();
  });

  it('finds the template of a request answered before routing (admission 503, body parser 400)', () => {
    expect(templates.of({ method: 'POST', originalUrl: '/v1/chat' }, 503)).toBe(
      '/v1/chat',
    );
    expect(
      templates.of(
        { method: 'POST', originalUrl: '/v1/skills/abc/run?debug=1' },
        400,
      ),
    ).toBe('/v1/skills/:id/run');
    expect(
      templates.of(
        { method: 'HEAD', originalUrl: '/v1/conversations/abc' },
        503,
      ),
    ).toBe('/v1/conversations/:id');
  });

  it('never answers the raw URL: a path or method no route has is unmatched', () => {
    expect(
      templates.of(
        { method: 'GET', originalUrl: '/v1/users/alice@example.com' },
        400,
      ),
    ).toBe(UNMATCHED_ROUTE);
    expect(
      templates.of({ method: 'DELETE', originalUrl: '/v1/chat' }, 403),
    ).toBe(UNMATCHED_ROUTE);
  });

  it('labels 404 and 405 unmatched without a lookup', () => {
    const lookups = jest.fn(() => stack);
    expect(
      new RouteTemplates(lookups).of(
        { method: 'GET', originalUrl: '/v1/chat' },
        405,
      ),
    ).toBe(UNMATCHED_ROUTE);
    expect(
      new RouteTemplates(lookups).of(
        { method: 'GET', originalUrl: '/anything' },
        404,
      ),
    ).toBe(UNMATCHED_ROUTE);
    expect(lookups).not.toHaveBeenCalled();
  });
});
