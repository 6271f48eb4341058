import { LEADING_USER_PLACEHOLDER } from './anthropic.provider';
import {
  geminiParameters,
  geminiRequestBody,
  GeminiStreamDecoder,
  toGeminiPrompt,
  UNSIGNED_CALL_SIGNATURE,
} from './gemini.provider';
import { ChatMessage, GenerationEvent } from './model-provider';
import { SseReader } from './sse-provider';
import { UpstreamError } from './upstream-error';

const m = (role: ChatMessage['role'], content: string): ChatMessage => ({
  role,
  content,
});

describe('toGeminiPrompt', () => {
  it('moves every system message to systemInstruction, in order, joined by a blank line; roles become user and model', () => {
    expect(
      toGeminiPrompt([
        m('system', 'Skill rules.'),
        m('user', 'Hi'),
        m('assistant', 'Hello'),
        m('system', 'Be brief.'),
        m('user', 'Why?'),
      ]),
    ).toEqual({
      systemInstruction: { parts: [{ text: 'Skill rules.\n\nBe brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello' }] },
        { role: 'user', parts: [{ text: 'Why?' }] },
      ],
    });
  });

  it('omits systemInstruction when there is none (or only blank ones)', () => {
    expect(toGeminiPrompt([m('system', ' \n'), m('user', 'Hi')])).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
  });

  it('merges consecutive turns of one role (Gemini requires alternation), also across a system message, and leaves out empty ones', () => {
    expect(
      toGeminiPrompt([
        m('user', 'one'),
        m('user', 'two'),
        m('system', 's'),
        m('user', 'three'),
        m('assistant', 'a'),
        m('assistant', '  '),
        m('assistant', 'b'),
        m('user', 'q'),
      ]).contents,
    ).toEqual([
      {
        role: 'user',
        parts: [{ text: 'one' }, { text: 'two' }, { text: 'three' }],
      },
      { role: 'model', parts: [{ text: 'a' }, { text: 'b' }] },
      { role: 'user', parts: [{ text: 'q' }] },
    ]);
  });

  it('puts a neutral user turn in front of a conversation that starts with the model', () => {
    expect(
      toGeminiPrompt([m('assistant', 'Welcome!'), m('user', 'Hi')]).contents,
    ).toEqual([
      { role: 'user', parts: [{ text: LEADING_USER_PLACEHOLDER }] },
      { role: 'model', parts: [{ text: 'Welcome!' }] },
      { role: 'user', parts: [{ text: 'Hi' }] },
    ]);
  });

  it('sends tool calls as functionCall parts of the model turn and results as functionResponse parts of a user turn, under the call’s name', () => {
    const contents = toGeminiPrompt([
      m('user', 'find the tent'),
      {
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [
          { id: 'ex-1', name: 'files_search', arguments: '{"query":"tent"}' },
          { id: 'ex-2', name: 'web_fetch', arguments: '' },
        ],
      },
      { role: 'tool', toolCallId: 'ex-1', content: '{"passages":[]}' },
      { role: 'tool', toolCallId: 'ex-2', content: 'no page' },
      m('user', 'and the stove?'),
    ]).contents;
    expect(contents).toEqual([
      { role: 'user', parts: [{ text: 'find the tent' }] },
      {
        role: 'model',
        parts: [
          { text: 'Looking.' },
          {
            functionCall: { name: 'files_search', args: { query: 'tent' } },
            thoughtSignature: UNSIGNED_CALL_SIGNATURE,
          },
          {
            functionCall: { name: 'web_fetch', args: {} },
            thoughtSignature: UNSIGNED_CALL_SIGNATURE,
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'files_search',
              response: { content: '{"passages":[]}' },
            },
          },
          {
            functionResponse: {
              name: 'web_fetch',
              response: { content: 'no page' },
            },
          },
          { text: 'and the stove?' },
        ],
      },
    ]);
    expect(UNSIGNED_CALL_SIGNATURE).toBe('skip_thought_signature_validator');
  });

  it('names a result after the latest call of its id, and sends a result without a known call as text', () => {
    const contents = toGeminiPrompt([
      m('user', 'q'),
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'first', arguments: '[1]' }],
      },
      { role: 'tool', toolCallId: 'call_1', content: 'r1' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'second', arguments: 'not json' }],
      },
      { role: 'tool', toolCallId: 'call_1', content: 'r2' },
      { role: 'tool', toolCallId: 'unknown', content: 'r3' },
    ]).contents;
    expect(contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'first', args: {} },
            thoughtSignature: UNSIGNED_CALL_SIGNATURE,
          },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'first', response: { content: 'r1' } } },
        ],
      },
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'second', args: {} },
            thoughtSignature: UNSIGNED_CALL_SIGNATURE,
          },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'second', response: { content: 'r2' } } },
          { text: '[Tool result]\nr3' },
        ],
      },
    ]);
  });
});

describe('geminiRequestBody', () => {
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
    {
      name: 'clock_now',
      description: 'The time',
      parameters: { type: 'object', properties: {} },
    },
  ];

  it('sends contents, systemInstruction and generationConfig.maxOutputTokens, and no tools when none are offered', () => {
    const body = JSON.parse(
      geminiRequestBody({
        upstreamModel: 'gemini-2.5-flash',
        maxOutputTokens: 64,
        messages: [m('system', 'S'), m('user', 'Q')],
        apiKey: 'not-in-the-body',
      }),
    ) as Record<string, unknown>;
    expect(body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Q' }] }],
      systemInstruction: { parts: [{ text: 'S' }] },
      generationConfig: { maxOutputTokens: 64 },
    });
  });

  it('offers tools as one functionDeclarations list, schemas stripped of $schema and additionalProperties, no parameters for a tool without arguments', () => {
    const body = JSON.parse(
      geminiRequestBody({
        upstreamModel: 'gemini-2.5-flash',
        maxOutputTokens: 10,
        messages: [m('user', 'hi')],
        tools,
      }),
    ) as Record<string, unknown>;
    expect(body.tools).toEqual([
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
          { name: 'clock_now', description: 'The time' },
        ],
      },
    ]);
  });
});

describe('geminiParameters', () => {
  it('strips $schema and additionalProperties at every depth, keeping properties of those names and data values', () => {
    expect(
      geminiParameters({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        additionalProperties: false,
        properties: {
          additionalProperties: { type: 'string', $schema: 'x' },
          filter: {
            type: 'object',
            additionalProperties: { type: 'string' },
            properties: {
              tags: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  properties: { name: { type: 'string' } },
                },
              },
            },
            default: { additionalProperties: 1 },
          },
          mode: {
            anyOf: [
              { type: 'string', enum: ['a', 'b'] },
              { type: 'object', additionalProperties: true },
            ],
          },
        },
        $defs: { $schema: { type: 'number', additionalProperties: false } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        additionalProperties: { type: 'string' },
        filter: {
          type: 'object',
          properties: {
            tags: {
              type: 'array',
              items: {
                type: 'object',
                properties: { name: { type: 'string' } },
              },
            },
          },
          default: { additionalProperties: 1 },
        },
        mode: {
          anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'object' }],
        },
      },
      $defs: { $schema: { type: 'number' } },
    });
  });

  it('is undefined for an object schema without properties (Gemini refuses an empty OBJECT)', () => {
    expect(geminiParameters({ type: 'object' })).toBeUndefined();
    expect(
      geminiParameters({
        type: 'object',
        properties: {},
        additionalProperties: false,
      }),
    ).toBeUndefined();
    expect(geminiParameters({ type: 'string' })).toEqual({ type: 'string' });
  });
});

const textChunk = (
  parts: Record<string, unknown>[],
  extra: Record<string, unknown> = {},
  candidate: Record<string, unknown> = {},
) =>
  JSON.stringify({
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...candidate }],
    modelVersion: 'gemini-2.5-flash',
    responseId: 'r1',
    ...extra,
  });
const usage = (metadata: Record<string, number>) => ({
  usageMetadata: metadata,
});

/** Runs SSE `data` payloads through a fresh decoder: the events, and whether a finishReason completed it. */
function decode(
  payloads: string[],
  options: { end?: boolean } = {},
): { events: GenerationEvent[]; complete: boolean } {
  const decoder = new GeminiStreamDecoder();
  const events: GenerationEvent[] = [];
  let complete = false;
  for (const data of payloads) {
    if (complete) throw new Error('event after completion');
    complete = decoder.event(data, undefined, events);
  }
  if (!complete && options.end) {
    decoder.end();
    complete = true;
  }
  return { events, complete };
}

describe('GeminiStreamDecoder', () => {
  it('yields each text part, skips thought parts, and completes at the finishReason with that chunk’s usage (cached and thinking tokens included)', () => {
    const { events, complete } = decode([
      textChunk(
        [{ text: 'Planning the answer', thought: true }],
        usage({ promptTokenCount: 1200, totalTokenCount: 1200 }),
      ),
      textChunk(
        [{ text: 'Hello' }, { text: '' }],
        usage({ promptTokenCount: 1200, totalTokenCount: 1201 }),
      ),
      textChunk(
        [{ text: ' world', thoughtSignature: 'c2lnbmF0dXJl' }],
        usage({
          promptTokenCount: 1200,
          candidatesTokenCount: 2,
          cachedContentTokenCount: 1024,
          thoughtsTokenCount: 30,
          totalTokenCount: 1232,
        }),
        { finishReason: 'STOP' },
      ),
    ]);
    expect(complete).toBe(true);
    expect(events).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' world' },
      {
        type: 'usage',
        inputTokens: 1200,
        outputTokens: 32,
        cachedInputTokens: 1024,
      },
    ]);
  });

  it('reports no cachedInputTokens when Gemini reported none, and no usage when it sent no usageMetadata', () => {
    expect(
      decode([
        textChunk(
          [{ text: 'x' }],
          usage({ promptTokenCount: 9, candidatesTokenCount: 1 }),
          { finishReason: 'MAX_TOKENS' },
        ),
      ]).events,
    ).toEqual([
      { type: 'text', text: 'x' },
      { type: 'usage', inputTokens: 9, outputTokens: 1 },
    ]);
    expect(
      decode([textChunk([{ text: 'x' }], {}, { finishReason: 'STOP' })]).events,
    ).toEqual([{ type: 'text', text: 'x' }]);
  });

  it('keeps the last usageMetadata seen when the final chunk has none', () => {
    expect(
      decode([
        textChunk(
          [{ text: 'a' }],
          usage({ promptTokenCount: 5, candidatesTokenCount: 1 }),
        ),
        textChunk(
          [{ text: 'b' }],
          usage({ promptTokenCount: 5, candidatesTokenCount: 2 }),
        ),
        textChunk([], {}, { finishReason: 'STOP' }),
      ]).events.at(-1),
    ).toEqual({ type: 'usage', inputTokens: 5, outputTokens: 2 });
  });

  it('reports functionCall parts as tool calls with ids call_1, call_2, ... at the end, after the text and before the usage', () => {
    const { events, complete } = decode([
      textChunk([{ text: 'Let me look.' }]),
      textChunk([
        {
          functionCall: { name: 'files_search', args: { query: 'tent' } },
          thoughtSignature: 'c2ln',
        },
      ]),
      textChunk(
        [{ functionCall: { name: 'clock_now' } }],
        usage({ promptTokenCount: 40, candidatesTokenCount: 12 }),
        { finishReason: 'STOP' },
      ),
    ]);
    expect(complete).toBe(true);
    expect(events).toEqual([
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
        call: { id: 'call_2', name: 'clock_now', arguments: '{}' },
      },
      { type: 'usage', inputTokens: 40, outputTokens: 12 },
    ]);
  });

  it('refuses a functionCall without a name', () => {
    expect(() => decode([textChunk([{ functionCall: { args: {} } }])])).toThrow(
      new UpstreamError('a functionCall came without its name'),
    );
  });

  it.each([
    'SAFETY',
    'RECITATION',
    'BLOCKLIST',
    'PROHIBITED_CONTENT',
    'SPII',
    'OTHER',
  ])(
    'a finishReason of %s with no text at all fails the answer, naming the reason',
    (reason) => {
      expect(() =>
        decode([
          textChunk([{ text: 'considering', thought: true }]),
          textChunk([], usage({ promptTokenCount: 3 }), {
            finishReason: reason,
          }),
        ]),
      ).toThrow(new UpstreamError(`no answer: finishReason ${reason}`));
    },
  );

  it('a SAFETY finish after some text completes the answer with that text', () => {
    expect(
      decode([
        textChunk([{ text: 'Part one.' }]),
        textChunk([], {}, { finishReason: 'SAFETY' }),
      ]),
    ).toEqual({
      events: [{ type: 'text', text: 'Part one.' }],
      complete: true,
    });
  });

  it('a blocked prompt (promptFeedback.blockReason, no candidates) fails naming the reason', () => {
    expect(() =>
      decode([
        JSON.stringify({
          promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
          usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
        }),
      ]),
    ).toThrow(new UpstreamError('prompt blocked: PROHIBITED_CONTENT'));
  });

  it('a body that ends before any finishReason was cut short', () => {
    expect(() =>
      decode([textChunk([{ text: 'a' }]), textChunk([{ text: 'b' }])], {
        end: true,
      }),
    ).toThrow(
      new UpstreamError(
        'stream ended before the model finished (no finishReason)',
      ),
    );
  });

  it('an error chunk fails the stream with Google’s message', () => {
    expect(() =>
      decode([
        textChunk([{ text: 'a' }]),
        JSON.stringify({
          error: {
            code: 503,
            message: 'The model is overloaded. Please try again later.',
            status: 'UNAVAILABLE',
          },
        }),
      ]),
    ).toThrow(
      new UpstreamError(
        'error event: The model is overloaded. Please try again later.',
      ),
    );
  });

  it('a payload that is not a JSON object is a malformed stream', () => {
    expect(() => decode(['[{"candidates": []}]'])).toThrow(
      new UpstreamError('malformed stream event (not a JSON object)'),
    );
  });

  it('reads Google’s CRLF framing through SseReader and stops at the finishReason', () => {
    const wire = [
      `data: ${textChunk([{ text: 'Grüße' }])}\r\n\r\n`,
      `data: ${textChunk([{ text: '!' }], usage({ promptTokenCount: 4, candidatesTokenCount: 2 }), { finishReason: 'STOP' })}\r\n\r\n`,
      `data: ${textChunk([{ text: 'after the end' }])}\r\n\r\n`,
    ].join('');
    const bytes = Buffer.from(wire, 'utf8');
    for (const size of [1, 3, 64, bytes.length]) {
      const events: GenerationEvent[] = [];
      const reader = new SseReader(new GeminiStreamDecoder(), events);
      let complete = false;
      for (let at = 0; at < bytes.length && !complete; at += size)
        complete = reader.write(bytes.subarray(at, at + size));
      expect({ events, complete }).toEqual({
        events: [
          { type: 'text', text: 'Grüße' },
          { type: 'text', text: '!' },
          { type: 'usage', inputTokens: 4, outputTokens: 2 },
        ],
        complete: true,
      });
    }
  });
});
