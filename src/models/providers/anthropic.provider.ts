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
  private readonly headers: Record<string, string>;

  constructor(
    name: string,
    upstream: UpstreamSettings,
    transport: TransportSettings,
  ) {
    super(name, upstream, transport);
    this.headers = {
      'x-api-key': upstream.apiKey ?? '',
      'anthropic-version': ANTHROPIC_VERSION,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    };
  }

  protected call(request: GenerationRequest): UpstreamCall {
    return {
      path: '/messages',
      headers: this.headers,
      body: anthropicRequestBody(request),
    };
  }

  protected decoder(): StreamDecoder {
    return new AnthropicStreamDecoder();
  }
}

export function anthropicRequestBody(request: GenerationRequest): string {
  const { system, messages } = toAnthropicPrompt(request.messages);
  return JSON.stringify({
    model: request.upstreamModel,
    max_tokens: request.maxOutputTokens,
    stream: true,
    ...(system === undefined ? {} : { system }),
    messages,
    ...(request.tools?.length
      ? {
          tools: request.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.parameters,
          })),
        }
      : {}),
  });
}

type TextBlock = { type: 'text'; text: string };
type ToolUseBlock = {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
};
type ToolResultBlock = {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
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
 * The service's messages in the shape the Messages API requires:
 * - every system message goes to `system`, in order, joined by a blank line (omitted when there is none);
 * - messages without visible text are left out (the API refuses empty and whitespace-only text blocks);
 * - consecutive messages of one role become one turn with one text block each (the API requires user and
 *   assistant turns to alternate; the AI SDK grouped them the same way);
 * - a first turn by the assistant gets LEADING_USER_PLACEHOLDER in front of it;
 * - a final assistant turn (a prefill the model continues) loses its trailing whitespace, which the API
 *   refuses there.
 */
export function toAnthropicPrompt(messages: readonly ChatMessage[]): {
  system?: string;
  messages: AnthropicMessage[];
} {
  const system: string[] = [];
  const turns: { role: 'user' | 'assistant'; blocks: Block[] }[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      if (message.content.trim()) system.push(message.content);
      continue;
    }
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    // A tool's result goes back in a user turn, as a tool_result block.
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  if (turns[0]?.role === 'assistant')
    turns.unshift({
      role: 'user',
      blocks: [{ type: 'text', text: LEADING_USER_PLACEHOLDER }],
    });
  const final = turns.at(-1)?.blocks.at(-1);
  if (turns.at(-1)?.role === 'assistant' && final?.type === 'text')
    final.text = final.text.trimEnd();
  return {
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    messages: turns.map(({ role, blocks }) => ({
      role,
      content:
        blocks.length === 1 && blocks[0].type === 'text'
          ? blocks[0].text
          : blocks,
    })),
  };
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
 * the input tokens (plus cache writes and reads, which are input too: the AI SDK's total), `message_delta`
 * the cumulative output tokens (and updated input counts, when it has them); `message_stop` completes the
 * response and reports the usage once. An `error` event fails it; `ping` and the other events (block
 * start and stop, thinking deltas) carry no text. A stream that ends before `message_stop` was cut short.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  /** The tool_use blocks being streamed, by block index: id and name at their start, the input in pieces. */
  private readonly toolUses = new Map<number, ToolCall>();
  private inputTokens: number | undefined;
  private cacheCreationTokens = 0;
  private cacheReadTokens = 0;
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
              this.cacheReadTokens,
            outputTokens: this.outputTokens,
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
