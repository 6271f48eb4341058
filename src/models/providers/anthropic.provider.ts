import {
  ChatMessage,
  GenerationEvent,
  GenerationRequest,
  ToolCall,
} from './model-provider';
import {
  SseModelProvider,
  StreamDecoder,
  TransportSettings,
  UpstreamCall,
  UpstreamSettings,
} from './sse-provider';
import {
  errorMessageOf,
  isRecord,
  parseEventJson,
  UpstreamError,
} from './upstream-error';

const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic's Messages API: `POST <baseUrl>/messages` with `stream: true`. */
export class AnthropicProvider extends SseModelProvider {
  constructor(
    name: string,
    upstream: UpstreamSettings,
    transport: TransportSettings,
  ) {
    super(name, upstream, transport);
  }

  protected call(request: GenerationRequest): UpstreamCall {
    return {
      path: '/messages',
      headers: {
        ...(request.apiKey ? { 'x-api-key': request.apiKey } : {}),
        'anthropic-version': ANTHROPIC_VERSION,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: anthropicRequestBody(request),
    };
  }

  protected decoder(): StreamDecoder {
    return new AnthropicStreamDecoder();
  }
}

export function anthropicRequestBody(request: GenerationRequest): string {
  const tools = request.tools?.length
    ? request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.parameters,
      }))
    : undefined;
  const { system, messages } = toAnthropicPrompt(request.messages, {
    prefix: request.cacheablePrefix ?? 0,
    toolsChars: tools ? JSON.stringify(tools).length : 0,
  });
  return JSON.stringify({
    model: request.upstreamModel,
    max_tokens: request.maxOutputTokens,
    stream: true,
    ...(system === undefined ? {} : { system }),
    messages,
    ...(tools ? { tools } : {}),
  });
}

/** A prompt caching breakpoint: Anthropic caches tools, system and messages up to and including the block. */
type CacheControl = { type: 'ephemeral' };
type TextBlock = { type: 'text'; text: string; cache_control?: CacheControl };
type ToolUseBlock = {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: CacheControl;
};
type ToolResultBlock = {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  cache_control?: CacheControl;
};
type Block = TextBlock | ToolUseBlock | ToolResultBlock;
export type AnthropicMessage = {
  role: 'user' | 'assistant';
  content: string | Block[];
};

/**
 * Put in front of a conversation whose first turn is the assistant's (a history cut to its newest
 * messages, a client-supplied greeting). The Messages API has answered such requests with 400 "first
 * message must use the user role"; the AI SDK sent them unchanged (so they failed). A neutral user turn
 * keeps the assistant's words in the context and makes the request valid either way.
 */
export const LEADING_USER_PLACEHOLDER = '(continued)';

/**
 * Prompt caching: a breakpoint is placed only where the prompt up to it (tools, system, messages) has at
 * least this many characters, about 1,000 tokens. Anthropic caches nothing below 1,024
 * tokens (2,048 or 4,096 on some models) and ignores such a mark silently; leaving it off keeps short
 * requests exactly as they were without caching.
 */
export const MIN_CACHED_PREFIX_CHARS = 4096;
/** Anthropic refuses a request with more cache_control marks than this. */
export const MAX_CACHE_BREAKPOINTS = 4;
/**
 * Anthropic looks for an earlier cache entry only about 20 content blocks back from each breakpoint, so
 * when the history grew by more than that since the last call (a long tool loop), breakpoints this far
 * apart before the last one still find it.
 */
export const CACHE_LOOKBACK_BLOCKS = 20;

/** Which of the messages form the stable prefix, and the size of the tool definitions that precede them. */
export interface PromptCaching {
  /** How many leading messages are stable (GenerationRequest.cacheablePrefix). */
  prefix: number;
  /** Characters of the tool definitions, first in Anthropic's cache order (tools, system, messages). */
  toolsChars: number;
}

interface SystemPart {
  text: string;
  /** Its index in the service's messages. */
  source: number;
}

interface Turn {
  role: 'user' | 'assistant';
  blocks: Block[];
}

/** The turns before rendering, each block with the index of the message it came from. */
interface Collected {
  system: SystemPart[];
  turns: Turn[];
  sources: Map<Block, number>;
}

/**
 * The service's messages in the shape the Messages API requires:
 * - every system message goes to `system`, in order, joined by a blank line (omitted when there is none);
 * - messages without visible text are left out (the API refuses empty and whitespace-only text blocks);
 * - consecutive messages of one role become one turn with one text block each (the API requires user and
 *   assistant turns to alternate; the AI SDK grouped them the same way);
 * - a first turn by the assistant gets LEADING_USER_PLACEHOLDER in front of it;
 * - a final assistant turn (a prefill the model continues) loses its trailing whitespace, which the API
 *   refuses there.
 * With `caching`, the stable prefix gets cache breakpoints (see markBreakpoints); `system` is then an
 * array of text blocks when its prefix part is marked.
 */
export function toAnthropicPrompt(
  messages: readonly ChatMessage[],
  caching: PromptCaching = { prefix: 0, toolsChars: 0 },
): {
  system?: string | TextBlock[];
  messages: AnthropicMessage[];
} {
  const collected = collect(messages);
  const systemMarked = markBreakpoints(collected, caching);
  const system = systemPrompt(collected.system, caching.prefix, systemMarked);
  return {
    ...(system === undefined ? {} : { system }),
    messages: collected.turns.map(({ role, blocks }) => ({
      role,
      content:
        blocks.length === 1 &&
        blocks[0].type === 'text' &&
        !blocks[0].cache_control
          ? blocks[0].text
          : blocks,
    })),
  };
}

/** The system parts and the alternating turns, each block remembering its message (see toAnthropicPrompt). */
function collect(messages: readonly ChatMessage[]): Collected {
  const system: SystemPart[] = [];
  const turns: Turn[] = [];
  const sources = new Map<Block, number>();
  messages.forEach((message, source) => {
    if (message.role === 'system') {
      if (message.content.trim())
        system.push({ text: message.content, source });
      return;
    }
    const blocks = blocksOf(message);
    if (blocks.length === 0) return;
    for (const block of blocks) sources.set(block, source);
    // A tool's result goes back in a user turn, as a tool_result block.
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  });
  if (turns[0]?.role === 'assistant')
    turns.unshift({
      role: 'user',
      blocks: [{ type: 'text', text: LEADING_USER_PLACEHOLDER }],
    });
  const final = turns.at(-1)?.blocks.at(-1);
  if (turns.at(-1)?.role === 'assistant' && final?.type === 'text')
    final.text = final.text.trimEnd();
  return { system, turns, sources };
}

/**
 * Marks the stable prefix for Anthropic's prompt cache; true when the system prompt is marked. Breakpoints,
 * at most MAX_CACHE_BREAKPOINTS, each only where the prompt up to it is MIN_CACHED_PREFIX_CHARS long:
 * - the system messages within the prefix (the Skill's instruction, the files section): their own cache
 *   entry, shared by every conversation that starts the same way;
 * - the last block that came from a message within the prefix (turns merge consecutive messages of one
 *   role, so this may sit inside a turn that goes on with the new message), then every
 *   CACHE_LOOKBACK_BLOCKS blocks before it.
 * Tool definitions come first in the cache order, so every breakpoint covers them without one of their own.
 */
function markBreakpoints(
  collected: Collected,
  caching: PromptCaching,
): boolean {
  const prefix = Math.floor(caching.prefix);
  if (!(prefix > 0)) return false;
  const { system, turns, sources } = collected;
  const inPrefix = system.filter((part) => part.source < prefix);
  const systemMarked =
    inPrefix.length > 0 &&
    caching.toolsChars + textLength(inPrefix) >= MIN_CACHED_PREFIX_CHARS;
  let remaining = MAX_CACHE_BREAKPOINTS - (systemMarked ? 1 : 0);
  const blocks = turns.flatMap((turn) => turn.blocks);
  // The messages follow the whole system prompt, prefix or not.
  const before = caching.toolsChars + textLength(system);
  const upTo = cumulativeLengths(blocks, before);
  const last = blocks.findLastIndex((block) => {
    const source = sources.get(block);
    return source !== undefined && source < prefix;
  });
  for (
    let index = last;
    index >= 0 && remaining > 0 && upTo[index] >= MIN_CACHED_PREFIX_CHARS;
    index -= CACHE_LOOKBACK_BLOCKS
  ) {
    blocks[index].cache_control = { type: 'ephemeral' };
    remaining -= 1;
  }
  return systemMarked;
}

/**
 * The system prompt: its parts joined by a blank line; when marked, as text blocks, the prefix's parts in
 * the first (the breakpoint) and any later system messages in a second. The blank line between them opens
 * the second block (Anthropic's own examples end a system block with its line break, reading the blocks
 * as they are joined), so the text is the same as unmarked and the cached first block does not change
 * when a later system message comes or goes.
 */
function systemPrompt(
  parts: SystemPart[],
  prefix: number,
  marked: boolean,
): string | TextBlock[] | undefined {
  if (parts.length === 0) return undefined;
  const join = (list: SystemPart[]) =>
    list.map((part) => part.text).join('\n\n');
  if (!marked) return join(parts);
  const cached = parts.filter((part) => part.source < prefix);
  const rest = parts.filter((part) => part.source >= prefix);
  return [
    { type: 'text', text: join(cached), cache_control: { type: 'ephemeral' } },
    ...(rest.length > 0
      ? [{ type: 'text' as const, text: `\n\n${join(rest)}` }]
      : []),
  ];
}

function textLength(parts: SystemPart[]): number {
  return parts.reduce((sum, part) => sum + part.text.length, 0);
}

/** For each block, the characters of the prompt up to and including it, starting from `before`. */
function cumulativeLengths(blocks: Block[], before: number): number[] {
  let sum = before;
  return blocks.map((block) => (sum += blockLength(block)));
}

function blockLength(block: Block): number {
  switch (block.type) {
    case 'text':
      return block.text.length;
    case 'tool_use':
      return block.name.length + JSON.stringify(block.input).length;
    case 'tool_result':
      return block.content.length;
  }
}

/** A message's blocks: its text (when it has visible text), its tool calls, or its tool result. */
function blocksOf(message: ChatMessage): Block[] {
  if (message.role === 'tool')
    return [
      {
        type: 'tool_result',
        tool_use_id: message.toolCallId ?? '',
        content: message.content,
      },
    ];
  const blocks: Block[] = message.content.trim()
    ? [{ type: 'text', text: message.content }]
    : [];
  for (const call of message.toolCalls ?? [])
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: parseArguments(call.arguments),
    });
  return blocks;
}

/** The arguments' JSON text as an object (`{}` when the model wrote none, or something that is not JSON). */
function parseArguments(text: string): unknown {
  try {
    return text.trim() ? (JSON.parse(text) as unknown) : {};
  } catch {
    return {};
  }
}

/**
 * Events → generation events: `content_block_delta` with a `text_delta` is text; `message_start` carries
 * the input tokens (plus cache writes and reads, which are input too: the AI SDK's total; the reads are
 * also reported as `cachedInputTokens`, priced apart, while cache writes stay priced as input although
 * Anthropic charges them 25% more: the service's prices know no third rate), `message_delta`
 * the cumulative output tokens (and updated input counts, when it has them); `message_stop` completes the
 * response and reports the usage once. An `error` event fails it; `ping` and the other events (block
 * start and stop, thinking deltas) carry no text. A stream that ends before `message_stop` was cut short.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  /** The tool_use blocks being streamed, by block index: id and name at their start, the input in pieces. */
  private readonly toolUses = new Map<number, ToolCall>();
  private inputTokens: number | undefined;
  private cacheCreationTokens = 0;
  /** Undefined until reported: a usage without the field reports no cached tokens (not 0). */
  private cacheReadTokens: number | undefined;
  private outputTokens: number | undefined;

  event(
    data: string,
    event: string | undefined,
    out: GenerationEvent[],
  ): boolean {
    const payload = parseEventJson(data);
    const type = typeof payload.type === 'string' ? payload.type : event;
    switch (type) {
      case 'content_block_start': {
        const block = payload.content_block;
        if (isRecord(block) && block.type === 'tool_use')
          this.toolUses.set(indexOf(payload), {
            id: typeof block.id === 'string' ? block.id : '',
            name: typeof block.name === 'string' ? block.name : '',
            arguments: '',
          });
        return false;
      }
      case 'content_block_delta': {
        const delta = payload.delta;
        if (!isRecord(delta)) return false;
        if (
          delta.type === 'text_delta' &&
          typeof delta.text === 'string' &&
          delta.text
        )
          out.push({ type: 'text', text: delta.text });
        const toolUse = this.toolUses.get(indexOf(payload));
        if (
          toolUse &&
          delta.type === 'input_json_delta' &&
          typeof delta.partial_json === 'string'
        )
          toolUse.arguments += delta.partial_json;
        return false;
      }
      case 'content_block_stop': {
        const toolUse = this.toolUses.get(indexOf(payload));
        if (!toolUse) return false;
        this.toolUses.delete(indexOf(payload));
        if (!toolUse.id || !toolUse.name)
          throw new UpstreamError(
            'a tool_use block came without its id or name',
          );
        out.push({
          type: 'tool_call',
          call: { ...toolUse, arguments: toolUse.arguments || '{}' },
        });
        return false;
      }
      case 'message_start': {
        const message = payload.message;
        if (isRecord(message)) this.readUsage(message.usage);
        return false;
      }
      case 'message_delta':
        this.readUsage(payload.usage);
        return false;
      case 'message_stop':
        if (this.inputTokens !== undefined && this.outputTokens !== undefined) {
          out.push({
            type: 'usage',
            inputTokens:
              this.inputTokens +
              this.cacheCreationTokens +
              (this.cacheReadTokens ?? 0),
            outputTokens: this.outputTokens,
            ...(this.cacheReadTokens === undefined
              ? {}
              : { cachedInputTokens: this.cacheReadTokens }),
          });
        }
        return true;
      case 'error':
        throw new UpstreamError(
          `error event: ${errorMessageOf(payload) ?? 'no message'}`,
        );
      default:
        return false;
    }
  }

  end(): void {
    throw new UpstreamError('stream ended before message_stop');
  }

  private readUsage(usage: unknown): void {
    if (!isRecord(usage)) return;
    if (typeof usage.input_tokens === 'number')
      this.inputTokens = usage.input_tokens;
    if (typeof usage.cache_creation_input_tokens === 'number')
      this.cacheCreationTokens = usage.cache_creation_input_tokens;
    if (typeof usage.cache_read_input_tokens === 'number')
      this.cacheReadTokens = usage.cache_read_input_tokens;
    if (typeof usage.output_tokens === 'number')
      this.outputTokens = usage.output_tokens;
  }
}

/** A content block event's `index` (0 when missing). */
function indexOf(payload: Record<string, unknown>): number {
  return typeof payload.index === 'number' ? payload.index : 0;
}
