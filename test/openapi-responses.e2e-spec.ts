import { registerUser } from './support/factories';
import {
  OpenApiDocument,
  OpenApiResponseChecker,
  takeOpenApiViolations,
} from './support/openapi-responses';
import { bootTestApp, TestApp } from './support/test-app';

/**
 * The suite's check of every response against the OpenAPI document (test/support/openapi-responses.ts)
 * must be able to fail: here against a small document, and against the service's own with a drift planted.
 */
describe('responses checked against the OpenAPI document', () => {
  const document: OpenApiDocument = {
    paths: {
      '/v1/things/{id}': {
        get: {
          responses: {
            '200': {
              content: {
                'application/json': {
                  schema: { $ref: '#/components/schemas/Thing' },
                },
              },
            },
            '404': {
              content: {
                'application/problem+json': { schema: { type: 'object' } },
              },
            },
          },
        },
      },
      '/v1/things/stream': {
        post: {
          responses: {
            '200': {
              content: {
                'text/event-stream': {
                  schema: { type: 'string' },
                  'x-itemSchema': {
                    type: 'object',
                    properties: {
                      event: { type: 'string', enum: ['tick'] },
                      data: {
                        type: 'object',
                        properties: { n: { type: 'integer' } },
                        required: ['n'],
                      },
                    },
                    required: ['event', 'data'],
                  },
                },
              },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Thing: {
          type: 'object',
          properties: {
            id: { type: 'string', format: 'uuid' },
            note: { type: 'string', nullable: true },
          },
          required: ['id', 'note'],
        },
      },
    },
  };
  const checker = new OpenApiResponseChecker(document);
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const id = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

  it('accepts what the document describes, ranges and parameters of the media type included', () => {
    expect(
      checker.check(
        'GET',
        `/v1/things/${id}?x=1`,
        200,
        'application/json; charset=utf-8',
        json({ id, note: null }),
      ),
    ).toEqual([]);
    expect(
      checker.check(
        'GET',
        `/v1/things/${id}`,
        404,
        'application/problem+json',
        json({}),
      ),
    ).toEqual([]);
    // Not an operation of the document: not checked.
    expect(
      checker.check('GET', '/docs', 200, 'text/html', Buffer.from('<html>')),
    ).toEqual([]);
  });

  it('reports an undocumented status, an undocumented content type and a body off its schema', () => {
    const get = (status: number, type: string, body: Buffer) =>
      checker.check('GET', `/v1/things/${id}`, status, type, body);
    expect(get(409, 'application/problem+json', json({}))).toEqual([
      expect.stringContaining('lists no 409 response'),
    ]);
    expect(get(200, 'text/plain', Buffer.from('hi'))).toEqual([
      expect.stringContaining('with text/plain: documented application/json'),
    ]);
    expect(get(200, 'application/json', json({ id: 'x' }))).toEqual([
      expect.stringMatching(
        /does not match the documented schema: .*(\/id must match format "uuid"|must have required property 'note')/,
      ),
    ]);
    expect(get(200, 'application/json', Buffer.from('{"id":'))).toEqual([
      expect.stringContaining('the body is not JSON'),
    ]);
  });

  it('checks each server-sent event against the documented event schema', () => {
    const stream = (text: string) =>
      checker.check(
        'POST',
        '/v1/things/stream',
        200,
        'text/event-stream; charset=utf-8',
        Buffer.from(text),
      );
    expect(
      stream('event: tick\ndata: {"n":1}\n\nevent: tick\ndata: {"n":2}\n\n'),
    ).toEqual([]);
    expect(
      stream(
        'event: tick\ndata: {"n":1}\n\nevent: tock\ndata: {"n":"two"}\n\n',
      ),
    ).toEqual([expect.stringContaining('event tock')]);
  });

  describe('on the service’s own document', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await bootTestApp();
    });
    afterAll(() => t.close());

    it('every response of a test app is checked, and a drift planted in a copy of the document is found', async () => {
      const user = await registerUser(t.http);
      const me = await t.http
        .get('/v1/auth/me')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(takeOpenApiViolations()).toEqual([]);
      const served = (await t.http.get('/docs-json').expect(200))
        .body as OpenApiDocument & {
        components: {
          schemas: Record<
            string,
            { required?: string[]; properties?: Record<string, unknown> }
          >;
        };
      };
      const schemaName = Object.keys(served.components.schemas).find((name) =>
        /^(Me|CurrentUser|User)(Response)?Dto$/.test(name),
      );
      expect(schemaName).toBeDefined();
      const schema = served.components.schemas[schemaName as string];
      schema.properties = {
        ...schema.properties,
        nickname: { type: 'string' },
      };
      schema.required = [...(schema.required ?? []), 'nickname'];
      const drifted = new OpenApiResponseChecker(served);
      expect(
        drifted.check(
          'GET',
          '/v1/auth/me',
          200,
          'application/json',
          Buffer.from(JSON.stringify(me.body)),
        ),
      ).toEqual([
        expect.stringContaining("must have required property 'nickname'"),
      ]);
    });
  });
});
