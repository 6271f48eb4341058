import {
  anthropicRequestBody,
  AnthropicStreamDecoder,
  LEADING_USER_PLACEHOLDER,
  MIN_CACHED_PREFIX_CHARS,
  toAnthropicPrompt,
} from './anthropic.provider';
import {
  ChatMessage,
  GenerationEvent,
  GenerationRequest,
  ToolSpec,
} from './model-provider';
import { UpstreamError } from './upstream-error';

const m = (role: ChatMessage['role'], content: string): ChatMessage => ({
  role,
  content,
});

describe('toAnthropicPrompt', () => {
  it('moves every system message to `system`, in order, joined by a blank line', () => {
    const prompt = toAnthropicPrompt([
      m('system', 'Skill rules.'),
      m('user', 'Hi'),
      m('assistant', 'Hello'),
      m('system', 'Be brief.'),
      m('user', 'Why?'),
    ]);
    expect(prompt).toEqual({
      system: 'Skill rules.\n\nBe brief.',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'Why?' },
      ],
    });
  });

  it('omits `system` when there is none', () => {
    expect(toAnthropicPrompt([m('user', 'Hi')])).toEqual({
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });

  it('merges consecutive messages of one role into one turn, one text block each (also across a system message)', () => {
    const prompt = toAnthropicPrompt([
      m('user', 'one'),
      m('user', 'two'),
      m('system', 's'),
      m('user', 'three'),
      m('assistant', 'a'),
      m('assistant', 'b'),
      m('user', 'q'),
    ]);
    expect(prompt.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
          { type: 'text', text: 'three' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      { role: 'user', content: 'q' },
    ]);
  });

  it('leaves out messages without visible text (the API refuses empty text blocks), then merges what meets', () => {
    const prompt = toAnthropicPrompt([
      m('system', '  '),
      m('user', 'one'),
      m('assistant', ''),
      m('user', 'two'),
    ]);
    expect(prompt).toEqual({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'one' },
            { type: 'text', text: 'two' },
          ],
        },
      ],
    });
  });

  it('puts a neutral user turn in front of a conversation that starts with the assistant', () => {
    expect(
      toAnthropicPrompt([
        m('system', 'S'),
        m('assistant', 'Welcome!'),
        m('user', 'Hi'),
      ]).messages,
    ).toEqual([
      { role: 'user', content: LEADING_USER_PLACEHOLDER },
      { role: 'assistant', content: 'Welcome!' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('trims the trailing whitespace of a final assistant turn (a prefill), and only there', () => {
    expect(
      toAnthropicPrompt([
        m('user', 'Hi  '),
        m('assistant', 'First \n'),
        m('user', 'More'),
        m('assistant', '  The answer is \n'),
      ]).messages,
    ).toEqual([
      { role: 'user', content: 'Hi  ' },
      { role: 'assistant', content: 'First \n' },
      { role: 'user', content: 'More' },
      { role: 'assistant', content: '  The answer is' },
    ]);
  });

  it('builds the request body: model, max_tokens, stream, system, messages', () => {
    const body = JSON.parse(
      anthropicRequestBody({
        upstreamModel: 'claude-haiku-4-5',
        maxOutputTokens: 64,
        messages: [m('system', 'S'), m('user', 'Q')],
      }),
    ) as Record<string, unknown>;
    expect(body).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 64,
      stream: true,
      system: 'S',
      messages: [{ role: 'user', content: 'Q' }],
    });
    expect(Object.keys(body)).toEqual([
      'model',
      'max_tokens',
      'stream',
      'system',
      'messages',
    ]);
  });
});

describe('AnthropicStreamDecoder', () => {
  const start = (usage: Record<string, number>) => ({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      usage,
    },
  });
  const text = (value: string) => ({
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'text_delta', text: value },
  });

  function decode(payloads: Record<string, unknown>[]): {
    events: GenerationEvent[];
    complete: boolean;
  } {
    const decoder = new AnthropicStreamDecoder();
    const events: GenerationEvent[] = [];
    let complete = false;
    for (const payload of payloads) {
      if (complete) throw new Error('event after completion');
      complete = decoder.event(
        JSON.stringify(payload),
        typeof payload.type === 'string' ? payload.type : undefined,
        events,
      );
    }
    return { events, complete };
  }

  it('yields text deltas and, at message_stop, the usage: input from message_start, output from message_delta', () => {
    const { events, complete } = decode([
      start({ input_tokens: 12, output_tokens: 1 }),
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      },
      { type: 'ping' },
      text('Hello'),
      text(''),
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'thinking_delta', thinking: 'hmm' },
      },
      text(' there'),
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 5 },
      },
      { type: 'message_stop' },
    ]);
    expect(complete).toBe(true);
    expect(events).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' there' },
      { type: 'usage', inputTokens: 12, outputTokens: 5 },
    ]);
  });

  it('counts cache writes and reads as input, and takes updated counts from message_delta', () => {
    const { events } = decode([
      start({
        input_tokens: 10,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 1000,
        output_tokens: 1,
      }),
      text('x'),
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { input_tokens: 11, output_tokens: 3 },
      },
      { type: 'message_stop' },
    ]);
    expect(events.at(-1)).toEqual({
      type: 'usage',
      inputTokens: 1111,
      outputTokens: 3,
      cachedInputTokens: 1000,
    });
  });

  it('reports cachedInputTokens only when Anthropic reported cache reads, 0 included', () => {
    const usage = (fields: Record<string, number>) =>
      decode([
        start({ input_tokens: 20, output_tokens: 1, ...fields }),
        { type: 'message_delta', usage: { output_tokens: 4 } },
        { type: 'message_stop' },
      ]).events.at(-1);
    expect(
      usage({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }),
    ).toEqual({
      type: 'usage',
      inputTokens: 20,
      outputTokens: 4,
      cachedInputTokens: 0,
    });
    expect(usage({ cache_creation_input_tokens: 5000 })).toEqual({
      type: 'usage',
      inputTokens: 5020,
      outputTokens: 4,
    });
  });

  it('an error event fails the stream with the provider’s message', () => {
    expect(() =>
      decode([
        start({ input_tokens: 1, output_tokens: 1 }),
        text('part'),
        {
          type: 'error',
          error: { type: 'overloaded_error', message: 'Overloaded' },
        },
      ]),
    ).toThrow(new UpstreamError('error event: Overloaded'));
  });

  it('a stream that ends before message_stop was cut short', () => {
    const decoder = new AnthropicStreamDecoder();
    decoder.event(
      JSON.stringify(start({ input_tokens: 1, output_tokens: 1 })),
      'message_start',
      [],
    );
    expect(() => decoder.end()).toThrow(
      new UpstreamError('stream ended before message_stop'),
    );
  });

  it('a payload that is not JSON is a malformed stream', () => {
    expect(() =>
      new AnthropicStreamDecoder().event('not json', 'content_block_delta', []),
    ).toThrow(UpstreamError);
  });
});

describe('Anthropic tool use', () => {
  const tools = [
    {
      name: 'files_search',
      description: 'Search my files',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
    },
  ];

  it('offers tools as name, description and input_schema, only when there are some', () => {
    const body = (withTools: boolean) =>
      JSON.parse(
        anthropicRequestBody({
          upstreamModel: 'claude',
          maxOutputTokens: 10,
          messages: [m('user', 'hi')],
          ...(withTools ? { tools } : {}),
        }),
      ) as Record<string, unknown>;
    expect(body(true).tools).toEqual([
      {
        name: 'files_search',
        description: 'Search my files',
        input_schema: tools[0].parameters,
      },
    ]);
    expect(body(false)).not.toHaveProperty('tools');
  });

  it('sends the calls as tool_use blocks of the assistant, and their results in the next user turn', () => {
    const prompt = toAnthropicPrompt([
      m('user', 'find the tent'),
      {
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [
          { id: 'tu_1', name: 'files_search', arguments: '{"query":"tent"}' },
          { id: 'tu_2', name: 'files_search', arguments: '' },
        ],
      },
      { role: 'tool', toolCallId: 'tu_1', content: '{"passages":[]}' },
      { role: 'tool', toolCallId: 'tu_2', content: 'no match' },
    ]);
    expect(prompt.messages).toEqual([
      { role: 'user', content: 'find the tent' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          {
            type: 'tool_use',
            id: 'tu_1',
            name: 'files_search',
            input: { query: 'tent' },
          },
          { type: 'tool_use', id: 'tu_2', name: 'files_search', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'tu_1',
            content: '{"passages":[]}',
          },
          { type: 'tool_result', tool_use_id: 'tu_2', content: 'no match' },
        ],
      },
    ]);
  });

  it('streams a tool_use block into one tool call once the block stops, its input joined from the deltas', () => {
    const decoder = new AnthropicStreamDecoder();
    const events: GenerationEvent[] = [];
    const send = (payload: Record<string, unknown>) =>
      decoder.event(JSON.stringify(payload), payload.type as string, events);
    send({
      type: 'message_start',
      message: { usage: { input_tokens: 5, output_tokens: 1 } },
    });
    send({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    send({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'Let me look.' },
    });
    send({ type: 'content_block_stop', index: 0 });
    send({
      type: 'content_block_start',
      index: 1,
      content_block: {
        type: 'tool_use',
        id: 'tu_9',
        name: 'files_search',
        input: {},
      },
    });
    send({
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: '{"que' },
    });
    send({
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: 'ry":"tent"}' },
    });
    send({ type: 'content_block_stop', index: 1 });
    send({
      type: 'content_block_start',
      index: 2,
      content_block: { type: 'tool_use', id: 'tu_10', name: 'files_search' },
    });
    send({ type: 'content_block_stop', index: 2 });
    send({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use' },
      usage: { output_tokens: 30 },
    });
    expect(send({ type: 'message_stop' })).toBe(true);
    expect(events).toEqual([
      { type: 'text', text: 'Let me look.' },
      {
        type: 'tool_call',
        call: {
          id: 'tu_9',
          name: 'files_search',
          arguments: '{"query":"tent"}',
        },
      },
      {
        type: 'tool_call',
        call: { id: 'tu_10', name: 'files_search', arguments: '{}' },
      },
      { type: 'usage', inputTokens: 5, outputTokens: 30 },
    ]);
  });
});

describe('Anthropic prompt caching breakpoints', () => {
  const cache = { cache_control: { type: 'ephemeral' } };
  /** A Skill instruction long enough to be cached on its own. */
  const SKILL = `Skill: ${'s'.repeat(5000)}`;
  const body = (
    messages: ChatMessage[],
    cacheablePrefix?: number,
    tools?: ToolSpec[],
  ) =>
    JSON.parse(
      anthropicRequestBody({
        upstreamModel: 'claude',
        maxOutputTokens: 10,
        messages,
        ...(cacheablePrefix === undefined ? {} : { cacheablePrefix }),
        ...(tools ? { tools } : {}),
      } satisfies GenerationRequest),
    ) as Record<string, unknown>;
  const breakpoints = (value: Record<string, unknown>) =>
    JSON.stringify(value).split('"cache_control"').length - 1;

  it('marks nothing without a prefix (0 or absent): the request is the one sent before caching', () => {
    const messages = [m('system', SKILL), m('user', 'Q')];
    const expected = {
      model: 'claude',
      max_tokens: 10,
      stream: true,
      system: SKILL,
      messages: [{ role: 'user', content: 'Q' }],
    };
    expect(body(messages)).toEqual(expected);
    expect(body(messages, 0)).toEqual(expected);
  });

  it('a prefix of system messages only: `system` becomes one cached text block, the messages stay unmarked', () => {
    expect(
      body(
        [m('system', SKILL), m('system', 'Files: a.txt'), m('user', 'Q')],
        2,
      ),
    ).toEqual({
      model: 'claude',
      max_tokens: 10,
      stream: true,
      system: [{ type: 'text', text: `${SKILL}\n\nFiles: a.txt`, ...cache }],
      messages: [{ role: 'user', content: 'Q' }],
    });
  });

  it('a prefix into the history: the system and the last block of the last history message', () => {
    const history = 'h'.repeat(300);
    const prompt = toAnthropicPrompt(
      [
        m('system', SKILL),
        m('user', history),
        m('assistant', 'Earlier answer'),
        m('user', 'New question'),
      ],
      { prefix: 3, toolsChars: 0 },
    );
    expect(prompt).toEqual({
      system: [{ type: 'text', text: SKILL, ...cache }],
      messages: [
        { role: 'user', content: history },
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'Earlier answer', ...cache }],
        },
        { role: 'user', content: 'New question' },
      ],
    });
  });

  it('marks the block of message cacheablePrefix - 1 inside a turn merged with the new message', () => {
    const prompt = toAnthropicPrompt(
      [
        m('system', SKILL),
        m('user', 'find the tent'),
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'tu_1', name: 'files_search', arguments: '{}' }],
        },
        { role: 'tool', toolCallId: 'tu_1', content: 'no match' },
        m('user', 'try the stove'),
      ],
      { prefix: 4, toolsChars: 0 },
    );
    expect(prompt.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'tu_1',
          content: 'no match',
          ...cache,
        },
        { type: 'text', text: 'try the stove' },
      ],
    });
    expect(breakpoints(prompt)).toBe(2);
  });

  it('keeps a system message after the prefix out of the cached block, in a second one that starts with the blank line', () => {
    const prompt = toAnthropicPrompt(
      [
        m('system', SKILL),
        m('user', 'History'),
        m('system', 'Answer in English.'),
        m('user', 'Q'),
      ],
      { prefix: 2, toolsChars: 0 },
    );
    expect(prompt).toEqual({
      system: [
        { type: 'text', text: SKILL, ...cache },
        { type: 'text', text: '\n\nAnswer in English.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'History', ...cache },
            { type: 'text', text: 'Q' },
          ],
        },
      ],
    });
  });

  it('marks only where the prompt up to the breakpoint has MIN_CACHED_PREFIX_CHARS, tools included', () => {
    const exactly = 's'.repeat(MIN_CACHED_PREFIX_CHARS);
    const short = exactly.slice(1);
    expect(body([m('system', short), m('user', 'Q')], 1)).toMatchObject({
      system: short,
    });
    expect(body([m('system', exactly), m('user', 'Q')], 1)).toMatchObject({
      system: [{ type: 'text', text: exactly, ...cache }],
    });
    // A short system prompt before a long history: only the history's breakpoint is worth it.
    expect(
      toAnthropicPrompt(
        [m('system', 'Be brief.'), m('user', exactly), m('user', 'Q')],
        { prefix: 2, toolsChars: 0 },
      ),
    ).toEqual({
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: exactly, ...cache },
            { type: 'text', text: 'Q' },
          ],
        },
      ],
    });
    // The tool definitions come first in Anthropic's cache order: they count, and need no mark of their own.
    const tools: ToolSpec[] = [
      {
        name: 'files_search',
        description: 'd'.repeat(MIN_CACHED_PREFIX_CHARS),
        parameters: { type: 'object' },
      },
    ];
    const withTools = body(
      [m('system', 'Be brief.'), m('user', 'Q')],
      1,
      tools,
    );
    expect(withTools.system).toEqual([
      { type: 'text', text: 'Be brief.', ...cache },
    ]);
    expect(withTools.tools).toEqual([
      {
        name: 'files_search',
        description: tools[0].description,
        input_schema: { type: 'object' },
      },
    ]);
    expect(breakpoints(withTools)).toBe(1);
  });

  it('places at most 4 breakpoints: the system, then the end of the prefix and every 20 blocks before it', () => {
    const history = Array.from({ length: 100 }, (_, index) =>
      m(
        index % 2 === 0 ? 'user' : 'assistant',
        `turn ${index} ${'t'.repeat(100)}`,
      ),
    );
    const marked = (system: string) => {
      const prompt = toAnthropicPrompt(
        [m('system', system), ...history, m('user', 'Q')],
        { prefix: 101, toolsChars: 0 },
      );
      return {
        system: Array.isArray(prompt.system),
        turns: prompt.messages.flatMap((message, index) =>
          Array.isArray(message.content) &&
          message.content.some((block) => block.cache_control)
            ? [index]
            : [],
        ),
        total: breakpoints(prompt),
      };
    };
    expect(marked(SKILL)).toEqual({
      system: true,
      turns: [59, 79, 99],
      total: 4,
    });
    // A short system prompt is not marked: the fourth goes to the history, while it is long enough.
    expect(marked('Be brief.')).toEqual({
      system: false,
      turns: [39, 59, 79, 99],
      total: 4,
    });
  });
});
