import { GeminiProvider } from '../src/models/providers/gemini.provider';
import {
  ChatMessage,
  GenerationEvent,
  GenerationRequest,
  ProviderError,
} from '../src/models/providers/model-provider';
import { FakeGeminiServer } from './support/fake-gemini';

/** GeminiProvider over real HTTP against the loopback fake of Google's API: mapping, errors, aborts. */

const KEY = 'AIza-gemini-wire-0123456789abcdef';
const WRONG_KEY = 'AIza-wrong-key-fedcba9876543210';
const MODEL = 'gemini-2.5-flash';
const PROMPT = 'my very private question 5c1e';

const tools = [
  {
    name: 'files_search',
    description: 'Search my files',
    parameters: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { query: { type: 'string' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
];

function request(
  overrides: Partial<GenerationRequest> = {},
): GenerationRequest {
  return {
    upstreamModel: MODEL,
    apiKey: KEY,
    maxOutputTokens: 50,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: PROMPT },
    ],
    ...overrides,
  };
}

/** Every event until the end, or the error that ended the stream with the events before it. */
async function run(
  provider: GeminiProvider,
  input: GenerationRequest,
  onEvent?: (event: GenerationEvent) => void,
): Promise<{ events: GenerationEvent[]; error?: unknown }> {
  const events: GenerationEvent[] = [];
  try {
    for await (const event of provider.stream(input)) {
      events.push(event);
      onEvent?.(event);
    }
    return { events };
  } catch (error) {
    return { events, error };
  }
}

/** The ProviderError, after checking its message and stack carry neither a key nor the prompt. */
function providerError(error: unknown): ProviderError {
  expect(error).toBeInstanceOf(ProviderError);
  const failure = error as ProviderError;
  const text = `${failure.message} ${failure.stack ?? ''}`;
  for (const secret of [KEY, WRONG_KEY, PROMPT, 'Be brief.'])
    expect(text).not.toContain(secret);
  return failure;
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

describe('GeminiProvider on the wire', () => {
  let fake: FakeGeminiServer;
  let provider: GeminiProvider;
  beforeAll(async () => {
    fake = await new FakeGeminiServer([KEY], [MODEL]).start();
    provider = new GeminiProvider(
      'gemini',
      { baseUrl: `${fake.baseUrl}/v1beta` },
      { connectTimeoutMs: 5_000, responseTimeoutMs: 20_000 },
    );
  });
  afterAll(async () => {
    await provider.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Hello', ' there'] };
    fake.requests.length = 0;
    fake.closedEarly = 0;
  });

  it('streams the text without the thought summary, then the usage with the cached tokens, from a request in Gemini’s format', async () => {
    fake.mode = {
      kind: 'ok',
      words: ['Hello', ' there', '!'],
      thought: 'The user greets me.',
      usage: {
        promptTokenCount: 1500,
        candidatesTokenCount: 3,
        cachedContentTokenCount: 1024,
        thoughtsTokenCount: 20,
      },
    };
    const { events, error } = await run(provider, request());
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' there' },
      { type: 'text', text: '!' },
      {
        type: 'usage',
        inputTokens: 1500,
        outputTokens: 23,
        cachedInputTokens: 1024,
      },
    ]);
    expect(fake.requests).toHaveLength(1);
    const [received] = fake.requests;
    expect(received.method).toBe('POST');
    expect(received.path).toBe(
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
    );
    expect(received.headers['x-goog-api-key']).toBe(KEY);
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers.authorization).toBeUndefined();
    expect(received.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: PROMPT }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 50 },
    });
  });

  it('reports the model’s function calls as tool calls, then sends them and their results back in the next call', async () => {
    fake.mode = {
      kind: 'tool-call',
      text: 'Let me look.',
      calls: [
        { name: 'files_search', args: { query: 'tent' } },
        { name: 'files_search', args: { query: 'stove' } },
      ],
    };
    const first = await run(provider, request({ tools }));
    expect(first.error).toBeUndefined();
    expect(first.events).toEqual([
      { type: 'text', text: 'Let me look.' },
      {
        type: 'tool_call',
        call: {
          id: 'call_1',
          name: 'files_search',
          arguments: '{"query":"tent"}',
        },
      },
      {
        type: 'tool_call',
        call: {
          id: 'call_2',
          name: 'files_search',
          arguments: '{"query":"stove"}',
        },
      },
      { type: 'usage', inputTokens: 80, outputTokens: 30 },
    ]);
    expect(fake.requests[0].body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'files_search',
            description: 'Search my files',
            parameters: {
              type: 'object',
              properties: { query: { type: 'string' } },
              required: ['query'],
            },
          },
        ],
      },
    ]);

    fake.mode = { kind: 'ok', words: ['Found', ' it.'] };
    const history: ChatMessage[] = [
      { role: 'user', content: 'find the tent' },
      {
        role: 'assistant',
        content: 'Let me look.',
        toolCalls: [
          { id: 'exec-1', name: 'files_search', arguments: '{"query":"tent"}' },
          {
            id: 'exec-2',
            name: 'files_search',
            arguments: '{"query":"stove"}',
          },
        ],
      },
      { role: 'tool', toolCallId: 'exec-1', content: '{"passages":["tent"]}' },
      { role: 'tool', toolCallId: 'exec-2', content: '{"passages":[]}' },
    ];
    const second = await run(provider, request({ tools, messages: history }));
    expect(second.error).toBeUndefined();
    expect(second.events.filter((event) => event.type === 'text')).toEqual([
      { type: 'text', text: 'Found' },
      { type: 'text', text: ' it.' },
    ]);
    expect(fake.requests[1].body.contents).toEqual([
      { role: 'user', parts: [{ text: 'find the tent' }] },
      {
        role: 'model',
        parts: [
          { text: 'Let me look.' },
          {
            functionCall: { name: 'files_search', args: { query: 'tent' } },
            thoughtSignature: 'skip_thought_signature_validator',
          },
          {
            functionCall: { name: 'files_search', args: { query: 'stove' } },
            thoughtSignature: 'skip_thought_signature_validator',
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'files_search',
              response: { content: '{"passages":["tent"]}' },
            },
          },
          {
            functionResponse: {
              name: 'files_search',
              response: { content: '{"passages":[]}' },
            },
          },
        ],
      },
    ]);
  });

  it('HTTP 429 with Retry-After: an http failure with the status and the delay, Google’s message quoted', async () => {
    fake.mode = {
      kind: 'http-error',
      status: 429,
      message: 'Resource has been exhausted (e.g. check quota).',
      retryAfter: '7',
      retryDelay: '7s',
    };
    const { events, error } = await run(provider, request());
    expect(events).toEqual([]);
    const failure = providerError(error);
    expect(failure.message).toBe(
      'gemini: HTTP 429: Resource has been exhausted (e.g. check quota).',
    );
    expect(failure.failure).toEqual({
      kind: 'http',
      status: 429,
      retryAfterMs: 7_000,
    });
    expect(fake.requests).toHaveLength(1);
  });

  it('a wrong key: HTTP 400 API_KEY_INVALID, said to be the key (the router rests it), the key in no message', async () => {
    const { error } = await run(provider, request({ apiKey: WRONG_KEY }));
    const failure = providerError(error);
    expect(failure.message).toBe(
      'gemini: HTTP 400: API key not valid. Please pass a valid API key.',
    );
    expect(failure.failure).toEqual({
      kind: 'http',
      status: 400,
      keyRejected: true,
    });
    expect(fake.requests[0].headers['x-goog-api-key']).toBe(WRONG_KEY);
  });

  it('no key: no x-goog-api-key header at all (Google answers 403)', async () => {
    const { error } = await run(provider, request({ apiKey: undefined }));
    expect(providerError(error).failure).toEqual({
      kind: 'http',
      status: 403,
    });
    expect(fake.requests[0].headers).not.toHaveProperty('x-goog-api-key');
  });

  it('an unknown model: HTTP 404 NOT_FOUND naming it, the model name URI-encoded in the path', async () => {
    const { error } = await run(
      provider,
      request({ upstreamModel: 'gemini 9 ultra' }),
    );
    const failure = providerError(error);
    expect(failure.message).toBe(
      'gemini: HTTP 404: models/gemini 9 ultra is not found for API version v1beta, or is not supported for generateContent.',
    );
    expect(failure.failure).toEqual({ kind: 'http', status: 404 });
    expect(fake.requests[0].path).toBe(
      '/v1beta/models/gemini%209%20ultra:streamGenerateContent?alt=sse',
    );
  });

  it('an error chunk mid-stream: a stream failure after the words before it', async () => {
    fake.mode = {
      kind: 'error-after',
      words: ['Partial', ' answer'],
      message: 'The model is overloaded. Please try again later.',
    };
    const { events, error } = await run(provider, request());
    expect(events).toEqual([
      { type: 'text', text: 'Partial' },
      { type: 'text', text: ' answer' },
    ]);
    const failure = providerError(error);
    expect(failure.message).toBe(
      'gemini: error event: The model is overloaded. Please try again later.',
    );
    expect(failure.failure).toEqual({ kind: 'stream' });
  });

  it('a body that ends without a finishReason: a stream failure', async () => {
    fake.mode = { kind: 'cut-after', words: ['Half'] };
    const { events, error } = await run(provider, request());
    expect(events).toEqual([{ type: 'text', text: 'Half' }]);
    const failure = providerError(error);
    expect(failure.message).toBe(
      'gemini: stream ended before the model finished (no finishReason)',
    );
    expect(failure.failure).toEqual({ kind: 'stream' });
  });

  it('a connection broken mid-stream: a stream failure', async () => {
    fake.mode = { kind: 'break-after', words: ['Half', ' way'] };
    const { events, error } = await run(provider, request());
    expect(events).toEqual([
      { type: 'text', text: 'Half' },
      { type: 'text', text: ' way' },
    ]);
    expect(providerError(error).failure).toEqual({ kind: 'stream' });
  });

  it('an abort through the signal ends the call and closes the upstream connection', async () => {
    let release!: () => void;
    fake.mode = {
      kind: 'ok',
      words: ['First', ' never'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    const controller = new AbortController();
    try {
      const { events, error } = await run(
        provider,
        request({ signal: controller.signal }),
        () => controller.abort(),
      );
      expect(events).toEqual([{ type: 'text', text: 'First' }]);
      const failure = providerError(error);
      expect(failure.message).toBe('gemini: request aborted');
      expect(failure.failure).toEqual({ kind: 'aborted' });
      await until(() => fake.closedEarly === 1);
    } finally {
      release();
    }
  });
});
