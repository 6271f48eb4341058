import { ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import {
  bedrockClientConfig,
  bedrockFailure,
  ConverseStreamDecoder,
  converseStreamInput,
  EMPTY_TOOL_RESULT,
  supportsPromptCaching,
} from './bedrock.provider';
import { LEADING_USER_PLACEHOLDER } from './anthropic.provider';
import {
  ChatMessage,
  GenerationEvent,
  GenerationRequest,
  ProviderError,
} from './model-provider';
import { UpstreamError } from './upstream-error';

const CLAUDE = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';
const CACHE_POINT = { cachePoint: { type: 'default' } };

function request(
  messages: ChatMessage[],
  extra: Partial<GenerationRequest> = {},
): GenerationRequest {
  return { upstreamModel: CLAUDE, messages, maxOutputTokens: 256, ...extra };
}

describe('converseStreamInput', () => {
  it('puts the system messages in one system block and makes the turns alternate', () => {
    expect(
      converseStreamInput(
        request([
          { role: 'system', content: 'Be brief.' },
          { role: 'assistant', content: 'Hello! How can I help?' },
          { role: 'user', content: 'One' },
          { role: 'user', content: '   ' },
          { role: 'system', content: 'Files: none.' },
          { role: 'user', content: 'Two' },
          { role: 'assistant', content: 'Sure thing  \n' },
        ]),
      ),
    ).toEqual({
      modelId: CLAUDE,
      system: [{ text: 'Be brief.\n\nFiles: none.' }],
      messages: [
        { role: 'user', content: [{ text: LEADING_USER_PLACEHOLDER }] },
        { role: 'assistant', content: [{ text: 'Hello! How can I help?' }] },
        { role: 'user', content: [{ text: 'One' }, { text: 'Two' }] },
        { role: 'assistant', content: [{ text: 'Sure thing' }] },
      ],
      inferenceConfig: { maxTokens: 256 },
    });
  });

  it('leaves out system when there is no system text, and toolConfig when no tool is offered', () => {
    const input = converseStreamInput(
      request([
        { role: 'system', content: ' ' },
        { role: 'user', content: 'Hi' },
      ]),
    );
    expect(Object.keys(input).sort()).toEqual([
      'inferenceConfig',
      'messages',
      'modelId',
    ]);
  });

  it('offers the tools and sends the calls and their results as toolUse and toolResult blocks', () => {
    const input = converseStreamInput(
      request(
        [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: 'Checking.',
            toolCalls: [
              { id: 'tu_1', name: 'weather', arguments: '{"city":"Paris"}' },
              { id: 'tu_2', name: 'weather', arguments: 'not json' },
              { id: 'tu_3', name: 'clock', arguments: '' },
            ],
          },
          { role: 'tool', toolCallId: 'tu_1', content: '18°C' },
          { role: 'tool', toolCallId: 'tu_2', content: '' },
          { role: 'tool', toolCallId: 'tu_3', content: '12:00' },
          { role: 'user', content: 'Thanks' },
        ],
        {
          tools: [
            {
              name: 'weather',
              description: 'The weather in a city',
              parameters: {
                type: 'object',
                properties: { city: { type: 'string' } },
              },
            },
            { name: 'clock', description: '', parameters: { type: 'object' } },
          ],
        },
      ),
    );
    expect(input.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'weather',
            description: 'The weather in a city',
            inputSchema: {
              json: {
                type: 'object',
                properties: { city: { type: 'string' } },
              },
            },
          },
        },
        {
          toolSpec: {
            name: 'clock',
            inputSchema: { json: { type: 'object' } },
          },
        },
      ],
    });
    expect(input.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { text: 'Checking.' },
          {
            toolUse: {
              toolUseId: 'tu_1',
              name: 'weather',
              input: { city: 'Paris' },
            },
          },
          { toolUse: { toolUseId: 'tu_2', name: 'weather', input: {} } },
          { toolUse: { toolUseId: 'tu_3', name: 'clock', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'tu_1', content: [{ text: '18°C' }] } },
          {
            toolResult: {
              toolUseId: 'tu_2',
              content: [{ text: EMPTY_TOOL_RESULT }],
            },
          },
          { toolResult: { toolUseId: 'tu_3', content: [{ text: '12:00' }] } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  it('writes the tool calls and results of the history as text when no tool is offered', () => {
    const input = converseStreamInput(
      request([
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'tu_1', name: 'weather', arguments: '{"city":"Paris"}' },
          ],
        },
        { role: 'tool', toolCallId: 'tu_1', content: '18°C' },
        { role: 'user', content: 'And now?' },
      ]),
    );
    expect(input.toolConfig).toBeUndefined();
    expect(input.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather?' }] },
      {
        role: 'assistant',
        content: [{ text: '(tool call weather {"city":"Paris"})' }],
      },
      {
        role: 'user',
        content: [
          { text: '(result of tool call tu_1) 18°C' },
          { text: 'And now?' },
        ],
      },
    ]);
  });

  const history: ChatMessage[] = [
    { role: 'system', content: 'Skill instructions' },
    { role: 'user', content: 'First question' },
    { role: 'assistant', content: 'First answer' },
    { role: 'user', content: 'New question' },
  ];

  it('marks the cacheable prefix with a cache point after the system text and after its last message', () => {
    const input = converseStreamInput(request(history, { cacheablePrefix: 3 }));
    expect(input.system).toEqual([{ text: 'Skill instructions' }, CACHE_POINT]);
    expect(input.messages).toEqual([
      { role: 'user', content: [{ text: 'First question' }] },
      { role: 'assistant', content: [{ text: 'First answer' }, CACHE_POINT] },
      { role: 'user', content: [{ text: 'New question' }] },
    ]);
  });

  it('places the message cache point inside a turn when the prefix ends in the middle of it', () => {
    const input = converseStreamInput(
      request(
        [
          { role: 'system', content: 'Skill instructions' },
          { role: 'user', content: 'Unanswered question' },
          { role: 'user', content: 'New question' },
        ],
        { cacheablePrefix: 2 },
      ),
    );
    expect(input.messages).toEqual([
      {
        role: 'user',
        content: [
          { text: 'Unanswered question' },
          CACHE_POINT,
          { text: 'New question' },
        ],
      },
    ]);
  });

  it('marks only the system text when the prefix holds no conversation message', () => {
    const input = converseStreamInput(request(history, { cacheablePrefix: 1 }));
    expect(input.system).toEqual([{ text: 'Skill instructions' }, CACHE_POINT]);
    expect(JSON.stringify(input.messages)).not.toContain('cachePoint');
  });

  it('does not mark the system text when a system message lies after the prefix', () => {
    const input = converseStreamInput(
      request(
        [
          { role: 'system', content: 'Skill instructions' },
          { role: 'user', content: 'First question' },
          { role: 'assistant', content: 'First answer' },
          { role: 'system', content: 'Files changed just now' },
          { role: 'user', content: 'New question' },
        ],
        { cacheablePrefix: 3 },
      ),
    );
    expect(input.system).toEqual([
      { text: 'Skill instructions\n\nFiles changed just now' },
    ]);
    expect(input.messages?.[1]).toEqual({
      role: 'assistant',
      content: [{ text: 'First answer' }, CACHE_POINT],
    });
  });

  it.each([
    ['meta.llama3-1-70b-instruct-v1:0'],
    ['mistral.mistral-large-2407-v1:0'],
    [
      'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3',
    ],
  ])('sends no cache point to %s', (upstreamModel) => {
    const input = converseStreamInput(
      request(history, { upstreamModel, cacheablePrefix: 3 }),
    );
    expect(JSON.stringify(input)).not.toContain('cachePoint');
  });

  it('sends no cache point without a cacheable prefix', () => {
    expect(JSON.stringify(converseStreamInput(request(history)))).not.toContain(
      'cachePoint',
    );
    expect(
      JSON.stringify(
        converseStreamInput(request(history, { cacheablePrefix: 0 })),
      ),
    ).not.toContain('cachePoint');
  });
});

describe('supportsPromptCaching', () => {
  it.each([
    ['anthropic.claude-3-5-haiku-20241022-v1:0', true],
    ['eu.anthropic.claude-sonnet-4-20250514-v1:0', true],
    [
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0',
      true,
    ],
    ['us.amazon.nova-lite-v1:0', true],
    ['anthropic.claude-haiku-4-5-20251001-v1:0', true],
    // Older Claude models refuse cache points (400): none is sent to them.
    ['anthropic.claude-3-haiku-20240307-v1:0', false],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', false],
    ['amazon.nova-pro-v1:0', false],
    ['amazon.titan-text-express-v1', false],
    ['cohere.command-r-plus-v1:0', false],
  ])('%s: %s', (modelId, expected) => {
    expect(supportsPromptCaching(modelId)).toBe(expected);
  });
});

describe('ConverseStreamDecoder', () => {
  function decode(events: ConverseStreamOutput[]): GenerationEvent[] {
    const decoder = new ConverseStreamDecoder();
    const out: GenerationEvent[] = [];
    for (const event of events) decoder.event(event, out);
    decoder.end(out);
    return out;
  }

  it('yields the text deltas, then the usage with the cache reads and writes counted as input', () => {
    expect(
      decode([
        { messageStart: { role: 'assistant' } },
        { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hel' } } },
        { contentBlockDelta: { contentBlockIndex: 0, delta: { text: '' } } },
        { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'lo' } } },
        { contentBlockStop: { contentBlockIndex: 0 } },
        { messageStop: { stopReason: 'end_turn' } },
        {
          metadata: {
            usage: {
              inputTokens: 12,
              outputTokens: 3,
              totalTokens: 1315,
              cacheReadInputTokens: 1200,
              cacheWriteInputTokens: 100,
            },
            metrics: { latencyMs: 40 },
          },
        },
      ]),
    ).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      {
        type: 'usage',
        inputTokens: 1312,
        outputTokens: 3,
        cachedInputTokens: 1200,
      },
    ]);
  });

  it('reports no cached tokens when Bedrock reports no cache read', () => {
    expect(
      decode([
        { messageStop: { stopReason: 'end_turn' } },
        {
          metadata: {
            usage: { inputTokens: 5, outputTokens: 1, totalTokens: 6 },
            metrics: { latencyMs: 1 },
          },
        },
      ]),
    ).toEqual([{ type: 'usage', inputTokens: 5, outputTokens: 1 }]);
  });

  it('reports no usage when the stream completes without metadata', () => {
    expect(
      decode([
        { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hi' } } },
        { messageStop: { stopReason: 'end_turn' } },
      ]),
    ).toEqual([{ type: 'text', text: 'Hi' }]);
  });

  it('assembles a tool call from its start, its pieces of JSON and its stop', () => {
    expect(
      decode([
        { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Ok.' } } },
        { contentBlockStop: { contentBlockIndex: 0 } },
        {
          contentBlockStart: {
            contentBlockIndex: 1,
            start: { toolUse: { toolUseId: 'tu_1', name: 'weather' } },
          },
        },
        {
          contentBlockDelta: {
            contentBlockIndex: 1,
            delta: { toolUse: { input: '{"ci' } },
          },
        },
        {
          contentBlockDelta: {
            contentBlockIndex: 1,
            delta: { toolUse: { input: 'ty":"Paris"}' } },
          },
        },
        { contentBlockStop: { contentBlockIndex: 1 } },
        {
          contentBlockStart: {
            contentBlockIndex: 2,
            start: { toolUse: { toolUseId: 'tu_2', name: 'clock' } },
          },
        },
        { contentBlockStop: { contentBlockIndex: 2 } },
        { messageStop: { stopReason: 'tool_use' } },
      ]),
    ).toEqual([
      { type: 'text', text: 'Ok.' },
      {
        type: 'tool_call',
        call: { id: 'tu_1', name: 'weather', arguments: '{"city":"Paris"}' },
      },
      {
        type: 'tool_call',
        call: { id: 'tu_2', name: 'clock', arguments: '{}' },
      },
    ]);
  });

  it('fails a tool call without its id', () => {
    expect(() =>
      decode([
        {
          contentBlockStart: {
            contentBlockIndex: 0,
            start: { toolUse: { toolUseId: '', name: 'weather' } },
          },
        },
        { contentBlockStop: { contentBlockIndex: 0 } },
      ]),
    ).toThrow(new UpstreamError('a toolUse block came without its id or name'));
  });

  it('fails a stream that ends before messageStop', () => {
    expect(() =>
      decode([
        { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hi' } } },
      ]),
    ).toThrow(new UpstreamError('stream ended before messageStop'));
  });

  it('fails on an exception event', () => {
    const decoder = new ConverseStreamDecoder();
    const out: GenerationEvent[] = [];
    decoder.event(
      { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hi' } } },
      out,
    );
    const exception = Object.assign(new Error('The model broke'), {
      name: 'ModelStreamErrorException',
      $fault: 'client' as const,
      $metadata: {},
    });
    expect(() =>
      decoder.event(
        {
          modelStreamErrorException: exception,
        } as ConverseStreamOutput,
        out,
      ),
    ).toThrow(new UpstreamError('modelStreamErrorException: The model broke'));
    expect(out).toEqual([{ type: 'text', text: 'Hi' }]);
  });
});

describe('bedrockFailure', () => {
  const secrets = ['wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', 'AKIDEXAMPLE'];
  const send = { aborted: false, phase: 'send' as const, secrets };

  function serviceError(
    name: string,
    message: string,
    status: number | undefined,
    headers: Record<string, string> = {},
  ): Error {
    const error = Object.assign(new Error(message), {
      name,
      $fault: 'client',
      $metadata: status === undefined ? {} : { httpStatusCode: status },
    });
    Object.defineProperty(error, '$response', {
      value: { statusCode: status, headers },
      enumerable: false,
    });
    return error;
  }

  it('is an http failure with the status and the Retry-After of an error answer', () => {
    const failure = bedrockFailure(
      'bedrock',
      serviceError('ThrottlingException', 'Too many requests', 429, {
        'retry-after': '7',
      }),
      send,
    );
    expect(failure.message).toBe(
      'bedrock: HTTP 429: ThrottlingException: Too many requests',
    );
    expect(failure.failure).toEqual({
      kind: 'http',
      status: 429,
      retryAfterMs: 7000,
    });
  });

  it('takes a throttling or unavailable exception in a 2xx answer for the status it stands for', () => {
    const first = bedrockFailure(
      'bedrock',
      serviceError('ServiceUnavailableException', 'Try later', 200),
      send,
    );
    expect(first.message).toBe(
      'bedrock: HTTP 503: ServiceUnavailableException: Try later',
    );
    expect(first.failure).toEqual({ kind: 'http', status: 503 });
    const thrown = serviceError('ThrottlingException', 'Slow down', undefined);
    expect(bedrockFailure('bedrock', thrown, send).failure).toEqual({
      kind: 'http',
      status: 429,
    });
  });

  it('is a stream failure for another exception in a 2xx answer', () => {
    const other = bedrockFailure(
      'bedrock',
      serviceError('ModelStreamErrorException', 'Broken', 200),
      send,
    );
    expect(other.failure).toEqual({ kind: 'stream' });
    expect(
      bedrockFailure('bedrock', new UpstreamError('stream ended'), send)
        .failure,
    ).toEqual({ kind: 'stream' });
  });

  it('is a connection failure when no answer came, and a stream failure while the stream is read', () => {
    const refused = Object.assign(
      new Error(
        'The pending stream has been canceled (caused by: connect ECONNREFUSED 127.0.0.1:1)',
      ),
      {
        code: 'ERR_HTTP2_STREAM_CANCEL',
        cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
          code: 'ECONNREFUSED',
        }),
      },
    );
    const failure = bedrockFailure('bedrock', refused, send);
    expect(failure.message).toBe(
      'bedrock: The pending stream has been canceled (caused by: connect ECONNREFUSED 127.0.0.1:1) (ERR_HTTP2_STREAM_CANCEL)',
    );
    expect(failure.failure).toEqual({ kind: 'connection' });
    const reset = Object.assign(new Error('read ECONNRESET'), {
      code: 'ECONNRESET',
    });
    expect(
      bedrockFailure('bedrock', reset, { ...send, phase: 'stream' }).failure,
    ).toEqual({ kind: 'stream' });
  });

  it('is aborted once the signal aborted, whatever was thrown', () => {
    const failure = bedrockFailure(
      'bedrock',
      serviceError('InternalServerException', 'boom', 500),
      { ...send, aborted: true },
    );
    expect(failure.message).toBe('bedrock: request aborted');
    expect(failure.failure).toEqual({ kind: 'aborted' });
  });

  it('keeps a ProviderError as it is', () => {
    const error = new ProviderError('bedrock', 'x', { kind: 'stream' });
    expect(bedrockFailure('bedrock', error, send)).toBe(error);
  });

  it('replaces the credentials and keeps the first line', () => {
    const failure = bedrockFailure(
      'bedrock',
      serviceError(
        'IncompleteSignatureException',
        'Bad Authorization=AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/bedrock, key wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\nThe Canonical String for this request should have been',
        403,
      ),
      send,
    );
    expect(failure.message).toBe(
      'bedrock: HTTP 403: IncompleteSignatureException: Bad Authorization=AWS4-HMAC-SHA256 Credential=[redacted]/20260101/us-east-1/bedrock, key [redacted]',
    );
  });

  it('replaces every secret in one pass, never inside a replacement', () => {
    const failure = bedrockFailure(
      'bedrock',
      new Error('key secret+value/1 and da'),
      { ...send, secrets: ['da', 'secret+value/1'] },
    );
    expect(failure.message).toBe('bedrock: key [redacted] and [redacted]');
  });
});

describe('bedrockClientConfig', () => {
  it('never lets the SDK retry, signs with SigV4 and bounds the connection with the transport settings', () => {
    const config = bedrockClientConfig(
      {
        region: 'eu-west-1',
        endpoint: 'http://127.0.0.1:9',
        credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
      },
      { connectTimeoutMs: 1000, responseTimeoutMs: 70000 },
    );
    expect(config).toMatchObject({
      region: 'eu-west-1',
      endpoint: 'http://127.0.0.1:9',
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
      maxAttempts: 1,
      retryMode: 'standard',
      authSchemePreference: ['sigv4'],
      requestHandler: {
        requestTimeout: 70000,
        sessionTimeout: 70000,
        disableConcurrentStreams: true,
      },
    });
  });

  it('leaves the regional endpoint to the SDK when none is given', () => {
    const config = bedrockClientConfig(
      {
        region: 'eu-west-1',
        credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
      },
      { connectTimeoutMs: 1000, responseTimeoutMs: 70000 },
    );
    expect('endpoint' in config).toBe(false);
  });
});
