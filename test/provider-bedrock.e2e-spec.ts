import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  connect as http2Connect,
  createSecureServer,
  ServerHttp2Session,
} from 'node:http2';
import { AddressInfo, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BedrockRuntimeClient,
  ConverseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import {
  BedrockCredentials,
  BedrockProvider,
  connectWithin,
} from '../src/models/providers/bedrock.provider';
import {
  GenerationEvent,
  GenerationRequest,
  ProviderError,
} from '../src/models/providers/model-provider';
import { eventually } from './support/eventually';
import {
  FakeBedrockServer,
  INVALID_SIGNATURE_MESSAGE,
} from './support/fake-bedrock';

/**
 * BedrockProvider against a loopback Bedrock over real sockets: the AWS SDK signs (SigV4, checked by the
 * fake), speaks h2c and decodes the event stream; the provider maps what comes back.
 */
const REGION = 'us-east-1';
const MODEL = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';
const CREDENTIALS: BedrockCredentials = {
  accessKeyId: 'AKIDBEDROCKTEST',
  secretAccessKey: 'bedrock/Test+Secret/Key0123456789abcdefghij',
};
const TRANSPORT = { connectTimeoutMs: 2_000, responseTimeoutMs: 10_000 };

describe('BedrockProvider against a loopback Bedrock', () => {
  let fake: FakeBedrockServer;
  let provider: BedrockProvider;
  const others: BedrockProvider[] = [];

  beforeAll(async () => {
    fake = await new FakeBedrockServer(REGION, CREDENTIALS).start();
    provider = new BedrockProvider(
      'bedrock',
      { region: REGION, endpoint: fake.baseUrl, credentials: CREDENTIALS },
      TRANSPORT,
    );
  });

  afterAll(async () => {
    await Promise.all([provider, ...others].map((each) => each.close()));
    await fake.close();
  });

  beforeEach(() => {
    fake.requests.length = 0;
    fake.closedEarly = 0;
  });

  function another(
    endpoint: string,
    credentials = CREDENTIALS,
    transport = TRANSPORT,
  ): BedrockProvider {
    const made = new BedrockProvider(
      'bedrock',
      { region: REGION, endpoint, credentials },
      transport,
    );
    others.push(made);
    return made;
  }

  function ask(extra: Partial<GenerationRequest> = {}): GenerationRequest {
    return {
      upstreamModel: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      maxOutputTokens: 64,
      ...extra,
    };
  }

  async function collect(
    request: GenerationRequest,
    from: BedrockProvider = provider,
  ): Promise<GenerationEvent[]> {
    const events: GenerationEvent[] = [];
    for await (const event of from.stream(request)) events.push(event);
    return events;
  }

  /** The ProviderError the call ends with, and the events before it. */
  async function failing(
    request: GenerationRequest,
    from: BedrockProvider = provider,
  ): Promise<{ error: ProviderError; events: GenerationEvent[] }> {
    const events: GenerationEvent[] = [];
    try {
      for await (const event of from.stream(request)) events.push(event);
    } catch (error) {
      if (error instanceof ProviderError) return { error, events };
      throw error;
    }
    throw new Error(`no failure; events: ${JSON.stringify(events)}`);
  }

  it('streams the text, then the usage with the cache reads, over a signed h2c request', async () => {
    fake.mode = {
      kind: 'ok',
      words: ['Hello', ' there'],
      usage: {
        inputTokens: 9,
        outputTokens: 2,
        cacheReadInputTokens: 1500,
        cacheWriteInputTokens: 0,
      },
    };
    const events = await collect(ask({ cacheablePrefix: 1 }));
    expect(events).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' there' },
      {
        type: 'usage',
        inputTokens: 1509,
        outputTokens: 2,
        cachedInputTokens: 1500,
      },
    ]);
    expect(fake.requests).toHaveLength(1);
    const [received] = fake.requests;
    expect(received).toMatchObject({
      method: 'POST',
      path: '/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream',
      modelId: MODEL,
      httpVersion: '2.0',
      signatureVerified: true,
    });
    expect(received.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDBEDROCKTEST\/\d{8}\/us-east-1\/bedrock\/aws4_request, /,
    );
    expect(received.headers['amz-sdk-request']).toBe('attempt=1; max=1');
    expect(received.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      system: [{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }],
      inferenceConfig: { maxTokens: 64 },
    });
  });

  it('gets 403 for a wrong secret key, without the key in the message', async () => {
    const wrong = another(fake.baseUrl, {
      accessKeyId: CREDENTIALS.accessKeyId,
      secretAccessKey: 'wrong/Secret+Key0123456789abcdefghijklmn',
    });
    const { error } = await failing(ask(), wrong);
    expect(error.failure).toEqual({ kind: 'http', status: 403 });
    expect(error.message).toBe(
      `bedrock: HTTP 403: InvalidSignatureException: ${INVALID_SIGNATURE_MESSAGE}`,
    );
    expect(error.message).not.toContain('wrong/Secret');
    expect(fake.requests.map((each) => each.signatureVerified)).toEqual([
      false,
    ]);
  });

  it('gets 403 UnrecognizedClientException for an unknown access key', async () => {
    const unknown = another(fake.baseUrl, {
      accessKeyId: 'AKIDUNKNOWN',
      secretAccessKey: CREDENTIALS.secretAccessKey,
    });
    const { error } = await failing(ask(), unknown);
    expect(error.failure).toEqual({ kind: 'http', status: 403 });
    expect(error.message).toBe(
      'bedrock: HTTP 403: UnrecognizedClientException: The security token included in the request is invalid.',
    );
  });

  it('signs with the keys even when the environment holds a Bedrock API key', async () => {
    // The SDK prefers bearer auth when AWS_BEARER_TOKEN_BEDROCK is set, unless told otherwise.
    process.env.AWS_BEARER_TOKEN_BEDROCK =
      'bedrock-api-key-from-the-environment';
    try {
      fake.mode = { kind: 'ok', words: ['Signed'] };
      const events = await collect(ask(), another(fake.baseUrl));
      expect(events[0]).toEqual({ type: 'text', text: 'Signed' });
      expect(fake.requests[0].signatureVerified).toBe(true);
      expect(fake.requests[0].headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 /,
      );
    } finally {
      delete process.env.AWS_BEARER_TOKEN_BEDROCK;
    }
  });

  it('round-trips a tool call: the call streamed, then the toolUse and toolResult sent back', async () => {
    const tools = [
      {
        name: 'weather',
        description: 'The weather in a city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        },
      },
    ];
    fake.mode = {
      kind: 'tool-use',
      words: ['Checking.'],
      toolUseId: 'tooluse_abc123',
      name: 'weather',
      inputPieces: ['{"ci', 'ty": "Pa', 'ris"}'],
    };
    const first = await collect(
      ask({
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools,
      }),
    );
    expect(first).toEqual([
      { type: 'text', text: 'Checking.' },
      {
        type: 'tool_call',
        call: {
          id: 'tooluse_abc123',
          name: 'weather',
          arguments: '{"city": "Paris"}',
        },
      },
      { type: 'usage', inputTokens: 7, outputTokens: 2, cachedInputTokens: 0 },
    ]);
    fake.mode = { kind: 'ok', words: ['It is 18°C.'] };
    const second = await collect(
      ask({
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: 'Checking.',
            toolCalls: [
              {
                id: 'tooluse_abc123',
                name: 'weather',
                arguments: '{"city": "Paris"}',
              },
            ],
          },
          { role: 'tool', toolCallId: 'tooluse_abc123', content: '18°C' },
        ],
        tools,
      }),
    );
    expect(second[0]).toEqual({ type: 'text', text: 'It is 18°C.' });
    expect(fake.requests).toHaveLength(2);
    const toolConfig = {
      tools: [
        {
          toolSpec: {
            name: 'weather',
            description: 'The weather in a city',
            inputSchema: { json: tools[0].parameters },
          },
        },
      ],
    };
    expect(fake.requests[0].body.toolConfig).toEqual(toolConfig);
    expect(fake.requests[1].body).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Weather in Paris?' }] },
        {
          role: 'assistant',
          content: [
            { text: 'Checking.' },
            {
              toolUse: {
                toolUseId: 'tooluse_abc123',
                name: 'weather',
                input: { city: 'Paris' },
              },
            },
          ],
        },
        {
          role: 'user',
          content: [
            {
              toolResult: {
                toolUseId: 'tooluse_abc123',
                content: [{ text: '18°C' }],
              },
            },
          ],
        },
      ],
      inferenceConfig: { maxTokens: 64 },
      toolConfig,
    });
    expect(fake.requests.every((each) => each.signatureVerified)).toBe(true);
  });

  it('reports 429 ThrottlingException as an http failure with its Retry-After', async () => {
    fake.mode = {
      kind: 'http-error',
      status: 429,
      errorType: 'ThrottlingException',
      message: 'Too many requests, please wait before trying again.',
      retryAfter: '2',
    };
    const { error } = await failing(ask());
    expect(error.failure).toEqual({
      kind: 'http',
      status: 429,
      retryAfterMs: 2000,
    });
    expect(error.message).toBe(
      'bedrock: HTTP 429: ThrottlingException: Too many requests, please wait before trying again.',
    );
    expect(fake.requests).toHaveLength(1);
  });

  it('reports 500 once: the SDK makes exactly one request', async () => {
    fake.mode = {
      kind: 'http-error',
      status: 500,
      errorType: 'InternalServerException',
      message: 'The server encountered an internal error.',
    };
    const { error } = await failing(ask());
    expect(error.failure).toEqual({ kind: 'http', status: 500 });
    expect(error.message).toBe(
      'bedrock: HTTP 500: InternalServerException: The server encountered an internal error.',
    );
    // A retry would come at once (the SDK's first backoff is under a second): wait past it.
    await new Promise((done) => setTimeout(done, 1_500));
    expect(fake.requests).toHaveLength(1);
  });

  it('reports 503 ServiceUnavailableException with its status', async () => {
    fake.mode = {
      kind: 'http-error',
      status: 503,
      errorType: 'ServiceUnavailableException',
      message: 'Service is temporarily unavailable.',
    };
    const { error } = await failing(ask());
    expect(error.failure).toEqual({ kind: 'http', status: 503 });
    expect(fake.requests).toHaveLength(1);
  });

  it('fails the stream on an exception event after some words', async () => {
    fake.mode = {
      kind: 'exception-after',
      words: ['Once', ' upon'],
      exceptionType: 'modelStreamErrorException',
      message: 'The model stopped unexpectedly.',
    };
    const { error, events } = await failing(ask());
    expect(events).toEqual([
      { type: 'text', text: 'Once' },
      { type: 'text', text: ' upon' },
    ]);
    expect(error.failure).toEqual({ kind: 'stream' });
    expect(error.message).toBe(
      'bedrock: ModelStreamErrorException: The model stopped unexpectedly.',
    );
  });

  it('takes a throttling exception before any word for the 429 it stands for (the router rests the key)', async () => {
    fake.mode = {
      kind: 'exception-after',
      words: [],
      exceptionType: 'throttlingException',
      message: 'Too many tokens.',
    };
    const { error, events } = await failing(ask());
    expect(events).toEqual([]);
    expect(error.failure).toEqual({ kind: 'http', status: 429 });
    expect(error.message).toBe(
      'bedrock: HTTP 429: ThrottlingException: Too many tokens.',
    );
  });

  it('fails a stream cut in the middle of an event', async () => {
    fake.mode = { kind: 'cut-after', words: ['Partial'] };
    const { error, events } = await failing(ask());
    expect(events).toEqual([{ type: 'text', text: 'Partial' }]);
    expect(error.failure).toEqual({ kind: 'stream' });
  });

  it('ends the call quickly when the signal aborts, closing the upstream stream', async () => {
    let release = () => {};
    fake.mode = {
      kind: 'ok',
      words: ['First', ' never'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    const abort = new AbortController();
    const iterator = provider
      .stream(ask({ signal: abort.signal }))
      [Symbol.asyncIterator]();
    try {
      expect((await iterator.next()).value).toEqual({
        type: 'text',
        text: 'First',
      });
      const started = Date.now();
      const next = iterator.next();
      abort.abort();
      await expect(next).rejects.toMatchObject({
        name: 'ProviderError',
        message: 'bedrock: request aborted',
        failure: { kind: 'aborted' },
      });
      expect(Date.now() - started).toBeLessThan(1_000);
      await eventually(() => fake.closedEarly === 1, 2_000);
    } finally {
      release();
    }
  });

  it('closes the upstream stream when the caller stops reading', async () => {
    let release = () => {};
    fake.mode = {
      kind: 'ok',
      words: ['First', ' never'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    try {
      for await (const event of provider.stream(ask())) {
        expect(event).toEqual({ type: 'text', text: 'First' });
        break;
      }
      await eventually(() => fake.closedEarly === 1, 2_000);
    } finally {
      release();
    }
  });

  it('reports a refused connection as a connection failure', async () => {
    const port = await closedPort();
    const { error } = await failing(ask(), another(`http://127.0.0.1:${port}`));
    expect(error.failure).toEqual({ kind: 'connection' });
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('gives up a connection that is not established within the connect timeout', async () => {
    // A TCP server that never answers the TLS handshake: connected, never secured. It reads (and drops)
    // what comes, so it sees the client's close and close() does not wait for the connection.
    const silent = createTcpServer((socket) => socket.resume());
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const port = (silent.address() as AddressInfo).port;
    try {
      const started = Date.now();
      const { error } = await failing(
        ask(),
        another(`https://127.0.0.1:${port}`, CREDENTIALS, {
          connectTimeoutMs: 300,
          responseTimeoutMs: 10_000,
        }),
      );
      expect(error.failure).toEqual({ kind: 'connection' });
      expect(error.message).toContain('connect timed out after 300 ms');
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await new Promise<void>((done) => silent.close(() => done()));
    }
  });

  it('the fake also serves HTTP/1.1 and checks its signature there', async () => {
    const client = new BedrockRuntimeClient({
      region: REGION,
      endpoint: fake.baseUrl,
      credentials: CREDENTIALS,
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler(),
    });
    fake.mode = { kind: 'ok', words: ['Over', ' h1'] };
    try {
      const { stream } = await client.send(
        new ConverseStreamCommand({
          modelId: MODEL,
          messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
        }),
      );
      const texts: string[] = [];
      for await (const event of stream ?? [])
        if (event.contentBlockDelta?.delta?.text)
          texts.push(event.contentBlockDelta.delta.text);
      expect(texts).toEqual(['Over', ' h1']);
    } finally {
      client.destroy();
    }
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({
      httpVersion: '1.1',
      signatureVerified: true,
    });
  });
});

describe('connectWithin', () => {
  it('opens a TLS connection with ALPN h2 and the server name, as http2.connect does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bedrock-tls-'));
    try {
      // A certificate for localhost made for this test (openssl is the only tool here that makes one).
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=DNS:localhost',
        ],
        { stdio: 'ignore' },
      );
      const cert = readFileSync(join(dir, 'cert.pem'));
      const server = createSecureServer(
        { key: readFileSync(join(dir, 'key.pem')), cert },
        (req, res) => res.end(`${req.httpVersion} ${req.authority}`),
      );
      const accepted: ServerHttp2Session[] = [];
      server.on('session', (each: ServerHttp2Session) => accepted.push(each));
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      const port = (server.address() as AddressInfo).port;
      const session = http2Connect(`https://localhost:${port}`, {
        createConnection: connectWithin(2_000),
        ca: cert,
      });
      try {
        const answer = await new Promise<string>((done, fail) => {
          const stream = session.request({ ':path': '/' });
          let body = '';
          stream.setEncoding('utf8');
          stream.on('data', (chunk: string) => (body += chunk));
          stream.on('end', () => done(body));
          stream.on('error', fail);
          session.on('error', fail);
        });
        expect(answer).toBe(`2.0 localhost:${port}`);
      } finally {
        session.destroy();
        for (const each of accepted) each.destroy();
        await new Promise<void>((done) => server.close(() => done()));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A port nothing listens on (just closed). */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}
