import { AddressInfo, createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import {
  AnthropicProvider,
  LEADING_USER_PLACEHOLDER,
} from '../src/models/providers/anthropic.provider';
import {
  ChatMessage,
  GenerationEvent,
  ModelProvider,
  ProviderError,
} from '../src/models/providers/model-provider';
import { OpenAiCompatibleProvider } from '../src/models/providers/openai-compatible.provider';
import {
  SseModelProvider,
  TransportSettings,
} from '../src/models/providers/sse-provider';
import { chat, listen } from './support/chat-client';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

/** The wire protocol of the direct provider adapters against the loopback fakes: errors, aborts, mapping. */

const OPENAI_KEY = 'sk-wire-0123456789abcdef';
const ANTHROPIC_KEY = 'ak-wire-0123456789abcdef';
const PROMPT = 'my very private question 7f3a';
const messages: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: PROMPT },
];
const KEYS: Record<string, string> = {
  openai: OPENAI_KEY,
  anthropic: ANTHROPIC_KEY,
};
const transport: TransportSettings = {
  connectTimeoutMs: 10_000,
  responseTimeoutMs: 60_000,
};

/** Every event until the end, or the error that ended the stream with the events before it. */
async function run(
  provider: ModelProvider,
  signal?: AbortSignal,
  input: ChatMessage[] = messages,
): Promise<{ events: GenerationEvent[]; error?: unknown }> {
  const events: GenerationEvent[] = [];
  try {
    for await (const event of provider.stream({
      upstreamModel: 'test-model',
      messages: input,
      apiKey: KEYS[provider.name],
      maxOutputTokens: 50,
      signal,
    }))
      events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

function texts(events: GenerationEvent[]): string {
  return events
    .map((event) => (event.type === 'text' ? event.text : ''))
    .join('');
}

async function until(
  condition: () => boolean,
  timeoutMs = 2_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((done) => setTimeout(done, 10));
  }
}

/** The message of a ProviderError, after checking it carries neither a key nor the prompt. */
function safeMessage(error: unknown): string {
  expect(error).toBeInstanceOf(ProviderError);
  const text = `${(error as Error).message} ${(error as Error).stack ?? ''}`;
  for (const secret of [OPENAI_KEY, ANTHROPIC_KEY, PROMPT, 'Be brief.'])
    expect(text).not.toContain(secret);
  return (error as Error).message;
}

describe('model provider adapters on the wire', () => {
  let fake: FakeModelServer;
  let providers: { configured(name: string): SseModelProvider };
  let adapters: SseModelProvider[];
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    adapters = [
      new OpenAiCompatibleProvider(
        'openai',
        { baseUrl: fake.baseUrl },
        transport,
      ),
      new AnthropicProvider('anthropic', { baseUrl: fake.baseUrl }, transport),
    ];
    providers = {
      configured: (name) =>
        adapters.find((adapter) => adapter.name === name) as SseModelProvider,
    };
  });
  afterAll(async () => {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    await fake.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Hello', ' there'] };
    fake.requests.length = 0;
    fake.closedEarly = 0;
  });

  describe.each(['openai', 'anthropic'])('%s', (name) => {
    it('an HTTP error with a JSON body: a ProviderError naming the status and the provider’s message, once, without key or prompt', async () => {
      const key = name === 'openai' ? OPENAI_KEY : ANTHROPIC_KEY;
      fake.mode = {
        kind: 'http-error',
        status: 401,
        message: `Incorrect API key provided: ${key}. You can find your API key at https://example.test`,
      };
      const { events, error } = await run(providers.configured(name));
      expect(events).toEqual([]);
      expect(safeMessage(error)).toBe(
        `${name}: HTTP 401: Incorrect API key provided: [redacted]. You can find your API key at https://example.test`,
      );
      expect(fake.requests).toHaveLength(1);
    });

    it('an HTTP error with a page that is not JSON: the status only', async () => {
      fake.mode = {
        kind: 'http-error',
        status: 502,
        message: 'Bad Gateway',
        html: true,
      };
      const { error } = await run(providers.configured(name));
      expect(safeMessage(error)).toBe(`${name}: HTTP 502`);
    });

    it('an error event mid-stream: the text before it, then a ProviderError with the provider’s message', async () => {
      fake.mode = {
        kind: 'error-after',
        words: ['partial', ' text'],
        message: 'Overloaded, try later',
      };
      const { events, error } = await run(providers.configured(name));
      expect(texts(events)).toBe('partial text');
      expect(events.some((event) => event.type === 'usage')).toBe(false);
      expect(safeMessage(error)).toBe(
        `${name}: error event: Overloaded, try later`,
      );
    });

    it('a connection broken mid-stream: the text before it, then a ProviderError', async () => {
      fake.mode = { kind: 'break-after', words: ['cut', ' off'] };
      const { events, error } = await run(providers.configured(name));
      expect(texts(events)).toBe('cut off');
      safeMessage(error);
    });

    it('an abort closes the upstream request at once', async () => {
      fake.mode = {
        kind: 'ok',
        words: ['first', ' never'],
        holdLast: new Promise<void>(() => undefined),
      };
      const abort = new AbortController();
      const iterator = providers
        .configured(name)
        .stream({
          upstreamModel: 'm',
          messages,
          apiKey: KEYS[name],
          maxOutputTokens: 10,
          signal: abort.signal,
        })
        [Symbol.asyncIterator]();
      expect((await iterator.next()).value).toEqual({
        type: 'text',
        text: 'first',
      });
      const pending = iterator.next();
      const started = Date.now();
      abort.abort();
      await expect(pending).rejects.toBeInstanceOf(ProviderError);
      await until(() => fake.closedEarly === 1);
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it('a consumer that stops reading closes the upstream request too', async () => {
      fake.mode = {
        kind: 'ok',
        words: ['first', ' never'],
        holdLast: new Promise<void>(() => undefined),
      };
      const iterator = providers
        .configured(name)
        .stream({
          upstreamModel: 'm',
          messages,
          apiKey: KEYS[name],
          maxOutputTokens: 10,
        })
        [Symbol.asyncIterator]();
      expect((await iterator.next()).value).toEqual({
        type: 'text',
        text: 'first',
      });
      await iterator.return?.(undefined);
      await until(() => fake.closedEarly === 1);
    });

    it('a finished stream leaves its connection to the next request (keep-alive)', async () => {
      await run(providers.configured(name));
      await new Promise((done) => setTimeout(done, 100));
      await run(providers.configured(name));
      expect(fake.requests).toHaveLength(2);
      expect(fake.requests[1].remotePort).toBe(fake.requests[0].remotePort);
      expect(fake.closedEarly).toBe(0);
    });
  });

  it('a provider nobody listens for: a ProviderError naming the refused connection', async () => {
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((done) => probe.close(done));
    const offline = new OpenAiCompatibleProvider(
      'openai',
      { baseUrl: `http://127.0.0.1:${port}/v1` },
      transport,
    );
    try {
      const { error } = await run(offline);
      expect(safeMessage(error)).toMatch(/^openai: .*ECONNREFUSED/);
    } finally {
      await offline.close();
    }
  });

  it('sends Anthropic its headers, `system` and alternating turns', async () => {
    const conversation: ChatMessage[] = [
      { role: 'system', content: 'Skill instructions.' },
      { role: 'assistant', content: 'Welcome back!' },
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
      { role: 'system', content: 'Answer in English.' },
      { role: 'assistant', content: 'a' },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'three' },
    ];
    const { events } = await run(
      providers.configured('anthropic'),
      undefined,
      conversation,
    );
    expect(events.at(-1)).toEqual({
      type: 'usage',
      inputTokens: 7,
      outputTokens: 2,
    });
    expect(fake.requests).toEqual([
      {
        path: '/messages',
        authorization: undefined,
        apiKey: ANTHROPIC_KEY,
        anthropicVersion: '2023-06-01',
        contentType: 'application/json',
        remotePort: expect.any(Number),
        model: 'test-model',
        max_tokens: 50,
        stream: true,
        system: 'Skill instructions.\n\nAnswer in English.',
        messages: [
          { role: 'user', content: LEADING_USER_PLACEHOLDER },
          { role: 'assistant', content: 'Welcome back!' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'one' },
              { type: 'text', text: 'two' },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
          { role: 'user', content: 'three' },
        ],
      },
    ]);
  });

  it('sends the OpenAI-compatible request the AI SDK sent', async () => {
    await run(providers.configured('openai'));
    expect(fake.requests).toEqual([
      {
        path: '/chat/completions',
        authorization: `Bearer ${OPENAI_KEY}`,
        apiKey: undefined,
        anthropicVersion: undefined,
        contentType: 'application/json',
        remotePort: expect.any(Number),
        model: 'test-model',
        messages,
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 50,
      },
    ]);
  });
});

describe('provider failures in the running service', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    t = await bootTestApp({
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: fake.baseUrl,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: fake.baseUrl,
      // One call per case: this suite reads what is logged; the router's retries have their own suite.
      PROVIDER_RETRIES: '0',
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('no log line and no response carries the prompt or a key, while the provider’s reason is logged', async () => {
    const user = await registerUser(t.http);
    await sql(`UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`, [user.id]);
    const cases: {
      model: string;
      mode: FakeModelServer['mode'];
      reason: string;
    }[] = [
      {
        model: 'openai/gpt-4o-mini',
        mode: {
          kind: 'http-error',
          status: 400,
          message: `Invalid request for key ${OPENAI_KEY}`,
        },
        reason: 'openai: HTTP 400: Invalid request for key [redacted]',
      },
      {
        model: 'anthropic/claude-haiku-4-5',
        mode: { kind: 'http-error', status: 529, message: 'Overloaded' },
        reason: 'anthropic: HTTP 529: Overloaded',
      },
      {
        model: 'openai/gpt-4o-mini',
        mode: {
          kind: 'error-after',
          words: ['some'],
          message: 'The server had an error',
        },
        reason: 'openai: error event: The server had an error',
      },
      {
        model: 'anthropic/claude-haiku-4-5',
        mode: { kind: 'error-after', words: ['some'], message: 'Overloaded' },
        reason: 'anthropic: error event: Overloaded',
      },
      {
        model: 'anthropic/claude-haiku-4-5',
        mode: { kind: 'break-after', words: ['some'] },
        reason: 'anthropic: ',
      },
    ];
    const bodies: string[] = [];
    for (const { model, mode } of cases) {
      fake.mode = mode;
      const res = await chat(base, user.cookie, {
        model,
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: PROMPT }],
      }).response;
      bodies.push(JSON.stringify(res.body));
    }
    expect(fake.requests).toHaveLength(cases.length);
    const failures = t.logs
      .filter((line) => line.msg === 'model provider failed')
      .map((line) => String(line.reason));
    expect(failures).toHaveLength(cases.length);
    for (const [index, { reason }] of cases.entries())
      expect(failures[index].startsWith(reason)).toBe(true);
    const everything = `${t.rawLogs()}\n${bodies.join('\n')}`;
    for (const secret of [PROMPT, OPENAI_KEY, ANTHROPIC_KEY])
      expect(everything).not.toContain(secret);
  });
});
