import { GenerationEvent } from './model-provider';
import {
  openAiRequestBody,
  OpenAiStreamDecoder,
} from './openai-compatible.provider';
import { SseReader } from './sse-provider';
import { UpstreamError } from './upstream-error';

const chunk = (
  content: string | null | undefined,
  finish: string | null = null,
  extra: Record<string, unknown> = {},
) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [
      {
        index: 0,
        delta: content === undefined ? {} : { content },
        finish_reason: finish,
      },
    ],
    ...extra,
  });
const usageChunk = (prompt: number, completion: number) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    },
  });

/** Runs SSE `data` payloads through a fresh decoder: the events, and whether [DONE]/the end completed it. */
function decode(
  payloads: string[],
  options: { end?: boolean } = {},
): { events: GenerationEvent[]; complete: boolean } {
  const decoder = new OpenAiStreamDecoder();
  const events: GenerationEvent[] = [];
  let complete = false;
  for (const data of payloads) {
    if (complete) throw new Error('event after completion');
    complete = decoder.event(data, undefined, events);
  }
  if (!complete && options.end) {
    decoder.end(events);
    complete = true;
  }
  return { events, complete };
}

describe('OpenAiStreamDecoder', () => {
  it('yields each non-empty delta.content as text and the usage once, at [DONE]', () => {
    const { events, complete } = decode([
      chunk(''),
      chunk('Hello'),
      chunk(null),
      chunk(' world'),
      chunk(undefined, 'stop'),
      usageChunk(7, 2),
      '[DONE]',
    ]);
    expect(complete).toBe(true);
    expect(events).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' world' },
      { type: 'usage', inputTokens: 7, outputTokens: 2 },
    ]);
  });

  it('keeps the last usage when a server reports it on every chunk, and ignores usage: null', () => {
    const { events } = decode([
      chunk('a', null, { usage: null }),
      chunk('b', null, { usage: { prompt_tokens: 5, completion_tokens: 1 } }),
      chunk(undefined, 'stop', {
        usage: { prompt_tokens: 5, completion_tokens: 2 },
      }),
      '[DONE]',
    ]);
    expect(events.filter((event) => event.type === 'usage')).toEqual([
      { type: 'usage', inputTokens: 5, outputTokens: 2 },
    ]);
  });

  it('reports no usage when the server sent none (the service then estimates)', () => {
    expect(
      decode([chunk('x'), chunk(undefined, 'stop'), '[DONE]']).events,
    ).toEqual([{ type: 'text', text: 'x' }]);
  });

  it('takes the text parts of array content and nothing else', () => {
    const parts = JSON.stringify({
      choices: [
        {
          index: 0,
          delta: {
            content: [
              { type: 'text', text: 'a' },
              {
                type: 'thinking',
                thinking: [{ type: 'text', text: 'hidden' }],
              },
              { type: 'text', text: '' },
              { type: 'text', text: 'b' },
            ],
          },
        },
      ],
    });
    expect(decode([parts, '[DONE]']).events).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
  });

  it('a clean end after a finish_reason is complete even without [DONE]', () => {
    const { events, complete } = decode(
      [chunk('a'), chunk(undefined, 'length'), usageChunk(3, 1)],
      { end: true },
    );
    expect(complete).toBe(true);
    expect(events).toEqual([
      { type: 'text', text: 'a' },
      { type: 'usage', inputTokens: 3, outputTokens: 1 },
    ]);
  });

  it('a stream that ends with neither finish_reason nor [DONE] was cut short', () => {
    expect(() => decode([chunk('a'), chunk('b')], { end: true })).toThrow(
      new UpstreamError(
        'stream ended before the model finished (no finish_reason, no [DONE])',
      ),
    );
  });

  it('an error payload fails the stream with the provider’s message (OpenAI and OpenRouter shapes, SSE error events)', () => {
    expect(() =>
      decode([
        chunk('a'),
        JSON.stringify({
          error: { message: 'The server had an error', type: 'server_error' },
        }),
      ]),
    ).toThrow(new UpstreamError('error event: The server had an error'));
    const openRouter = JSON.stringify({
      id: 'x',
      error: { code: 502, message: 'Provider disconnected' },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
    });
    expect(() => decode([openRouter])).toThrow(
      'error event: Provider disconnected',
    );
    const decoder = new OpenAiStreamDecoder();
    expect(() =>
      decoder.event(JSON.stringify({ message: 'overloaded' }), 'error', []),
    ).toThrow('error event: overloaded');
  });

  it('reports the cached part of prompt_tokens (OpenAI, Azure, vLLM, OpenRouter: prompt_tokens_details.cached_tokens)', () => {
    const usage = (extra: Record<string, unknown>) =>
      chunk(undefined, 'stop', {
        usage: { prompt_tokens: 2006, completion_tokens: 300, ...extra },
      });
    expect(
      decode([
        usage({
          prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
        }),
        '[DONE]',
      ]).events,
    ).toEqual([
      {
        type: 'usage',
        inputTokens: 2006,
        outputTokens: 300,
        cachedInputTokens: 1920,
      },
    ]);
    expect(
      decode([usage({ prompt_tokens_details: { cached_tokens: 0 } }), '[DONE]'])
        .events,
    ).toEqual([
      {
        type: 'usage',
        inputTokens: 2006,
        outputTokens: 300,
        cachedInputTokens: 0,
      },
    ]);
  });

  it('reads DeepSeek’s prompt_cache_hit_tokens, prefers prompt_tokens_details, and never reports more cached than prompt tokens', () => {
    const decodeUsage = (usage: Record<string, unknown>) =>
      decode([
        chunk(undefined, 'stop', {
          usage: { prompt_tokens: 100, completion_tokens: 5, ...usage },
        }),
        '[DONE]',
      ]).events;
    expect(
      decodeUsage({
        prompt_cache_hit_tokens: 64,
        prompt_cache_miss_tokens: 36,
      }),
    ).toEqual([
      {
        type: 'usage',
        inputTokens: 100,
        outputTokens: 5,
        cachedInputTokens: 64,
      },
    ]);
    expect(
      decodeUsage({
        prompt_tokens_details: { cached_tokens: 32 },
        prompt_cache_hit_tokens: 64,
      }),
    ).toEqual([
      {
        type: 'usage',
        inputTokens: 100,
        outputTokens: 5,
        cachedInputTokens: 32,
      },
    ]);
    expect(
      decodeUsage({ prompt_tokens_details: { cached_tokens: 500 } }),
    ).toEqual([
      {
        type: 'usage',
        inputTokens: 100,
        outputTokens: 5,
        cachedInputTokens: 100,
      },
    ]);
    expect(
      decodeUsage({
        prompt_tokens_details: null,
        prompt_cache_hit_tokens: -1,
      }),
    ).toEqual([{ type: 'usage', inputTokens: 100, outputTokens: 5 }]);
  });

  it('fails an answer the content filter stopped, naming the filtered categories (Azure) and nothing else', () => {
    const filtered = (results?: Record<string, unknown>) =>
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion.chunk',
        choices: [
          {
            index: 0,
            delta: {},
            finish_reason: 'content_filter',
            ...(results ? { content_filter_results: results } : {}),
          },
        ],
      });
    const events: GenerationEvent[] = [];
    const decoder = new OpenAiStreamDecoder();
    decoder.event(chunk('The first part'), undefined, events);
    expect(() =>
      decoder.event(
        filtered({
          hate: { filtered: false, severity: 'safe' },
          violence: { filtered: true, severity: 'medium' },
          protected_material_code: {
            filtered: true,
            detected: true,
            citation: { URL: 'https://example.test/repo', license: 'MIT' },
          },
        }),
        undefined,
        events,
      ),
    ).toThrow(
      new UpstreamError(
        'stopped by the content filter (violence: medium, protected_material_code)',
      ),
    );
    expect(events).toEqual([{ type: 'text', text: 'The first part' }]);
    expect(() => decode([filtered()])).toThrow(
      new UpstreamError('stopped by the content filter'),
    );
  });

  it('a payload that is not a JSON object is a malformed stream', () => {
    expect(() => decode(['{"choices": ['])).toThrow(UpstreamError);
    expect(() => decode(['42'])).toThrow(
      'malformed stream event (not a JSON object)',
    );
  });
});

describe('openAiRequestBody', () => {
  it('sends what the AI SDK sent: model, {role, content} messages, stream with usage, max_tokens', () => {
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'Hi', extra: 'not sent' },
    ];
    expect(
      JSON.parse(
        openAiRequestBody({
          upstreamModel: 'gpt-4o-mini',
          messages,
          maxOutputTokens: 42,
          signal: new AbortController().signal,
        }),
      ),
    ).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 42,
    });
  });
});

describe('SseReader', () => {
  const wire = [
    `data: ${chunk('Grüße')}\n\n`,
    `: keep-alive comment\n\n`,
    `data: ${chunk(' 🌍 ')}\r\n\r\n`,
    `data: ${chunk(undefined, 'stop')}\n\n`,
    `data: ${usageChunk(4, 2)}\n\n`,
    'data: [DONE]\n\n',
    `data: ${chunk('after done')}\n\n`,
  ].join('');
  const expected: GenerationEvent[] = [
    { type: 'text', text: 'Grüße' },
    { type: 'text', text: ' 🌍 ' },
    { type: 'usage', inputTokens: 4, outputTokens: 2 },
  ];

  function readInPieces(
    bytes: Buffer,
    size: number,
  ): { events: GenerationEvent[]; complete: boolean } {
    const events: GenerationEvent[] = [];
    const reader = new SseReader(new OpenAiStreamDecoder(), events);
    for (let offset = 0; offset < bytes.length; offset += size) {
      if (reader.write(bytes.subarray(offset, offset + size)))
        return { events, complete: true };
    }
    return { events, complete: false };
  }

  it('gives the same events however the bytes are split (multi-byte characters and CRLF included), and stops at [DONE]', () => {
    const bytes = Buffer.from(wire, 'utf8');
    for (const size of [1, 2, 3, 5, 7, 64, bytes.length]) {
      expect(readInPieces(bytes, size)).toEqual({
        events: expected,
        complete: true,
      });
    }
  });

  it('drops an event cut before its blank line, so a cut stream is not complete', () => {
    const events: GenerationEvent[] = [];
    const reader = new SseReader(new OpenAiStreamDecoder(), events);
    reader.write(
      Buffer.from(`data: ${chunk('a')}\n\ndata: ${chunk(undefined, 'stop')}\n`),
    );
    expect(() => reader.end()).toThrow(UpstreamError);
    expect(events).toEqual([{ type: 'text', text: 'a' }]);
  });
});

describe('OpenAI-compatible tool calls', () => {
  const tools = [
    {
      name: 'files_search',
      description: 'Search my files',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
    },
  ];

  it('offers tools as functions and sends earlier calls and their results in the chat completions shape', () => {
    const body = JSON.parse(
      openAiRequestBody({
        upstreamModel: 'gpt',
        maxOutputTokens: 10,
        tools,
        messages: [
          { role: 'user', content: 'find the tent' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              {
                id: 'call_1',
                name: 'files_search',
                arguments: '{"query":"tent"}',
              },
            ],
          },
          { role: 'tool', toolCallId: 'call_1', content: '{"passages":[]}' },
        ],
      }),
    ) as Record<string, unknown>;
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'files_search',
          description: 'Search my files',
          parameters: tools[0].parameters,
        },
      },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: 'find the tent' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'files_search', arguments: '{"query":"tent"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"passages":[]}' },
    ]);
    const plain = JSON.parse(
      openAiRequestBody({
        upstreamModel: 'gpt',
        maxOutputTokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    ) as Record<string, unknown>;
    expect(plain).not.toHaveProperty('tools');
  });

  const toolDelta = (
    calls: Record<string, unknown>[],
    finish: string | null = null,
  ) =>
    JSON.stringify({
      id: 'c1',
      object: 'chat.completion.chunk',
      choices: [
        { index: 0, delta: { tool_calls: calls }, finish_reason: finish },
      ],
    });

  it('joins argument deltas per call index and reports the calls in order at the end, before the usage', () => {
    const { events, complete } = decode([
      toolDelta([
        {
          index: 0,
          id: 'call_a',
          type: 'function',
          function: { name: 'files_search', arguments: '' },
        },
      ]),
      toolDelta([
        {
          index: 1,
          id: 'call_b',
          type: 'function',
          function: { name: 'files_search', arguments: '{"query":' },
        },
      ]),
      toolDelta([{ index: 0, function: { arguments: '{"query":"ten' } }]),
      toolDelta([
        { index: 0, function: { arguments: 't"}' } },
        { index: 1, function: { arguments: '"stove"}' } },
      ]),
      toolDelta([], 'tool_calls'),
      usageChunk(12, 20),
      '[DONE]',
    ]);
    expect(complete).toBe(true);
    expect(events).toEqual([
      {
        type: 'tool_call',
        call: {
          id: 'call_a',
          name: 'files_search',
          arguments: '{"query":"tent"}',
        },
      },
      {
        type: 'tool_call',
        call: {
          id: 'call_b',
          name: 'files_search',
          arguments: '{"query":"stove"}',
        },
      },
      { type: 'usage', inputTokens: 12, outputTokens: 20 },
    ]);
  });

  it('refuses a tool call that never got its id or name', () => {
    expect(() =>
      decode([
        toolDelta([{ index: 0, function: { arguments: '{}' } }], 'tool_calls'),
        '[DONE]',
      ]),
    ).toThrow(UpstreamError);
  });
});
