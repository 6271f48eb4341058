import {
  ChatMessage,
  GenerationEvent,
  GenerationRequest,
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
  });
}

type TextBlock = { type: 'text'; text: string };
export type AnthropicMessage = {
  role: 'user' | 'assistant';
  content: string | TextBlock[];
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
  const turns: { role: 'user' | 'assistant'; texts: string[] }[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      if (message.content.trim()) system.push(message.content);
      continue;
    }
    if (!message.content.trim()) continue;
    const last = turns.at(-1);
    if (last?.role === message.role) last.texts.push(message.content);
    else turns.push({ role: message.role, texts: [message.content] });
  }
  if (turns[0]?.role === 'assistant')
    turns.unshift({ role: 'user', texts: [LEADING_USER_PLACEHOLDER] });
  const final = turns.at(-1);
  if (final?.role === 'assistant')
    final.texts[final.texts.length - 1] =
      final.texts[final.texts.length - 1].trimEnd();
  return {
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    messages: turns.map(({ role, texts }) => ({
      role,
      content:
        texts.length === 1
          ? texts[0]
          : texts.map((text) => ({ type: 'text' as const, text })),
    })),
  };
}

/**
 * Events → generation events: `content_block_delta` with a `text_delta` is text; `message_start` carries
 * the input tokens (plus cache writes and reads, which are input too: the AI SDK's total), `message_delta`
 * the cumulative output tokens (and updated input counts, when it has them); `message_stop` completes the
 * response and reports the usage once. An `error` event fails it; `ping` and the other events (block
 * start and stop, thinking deltas) carry no text. A stream that ends before `message_stop` was cut short.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
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
      case 'content_block_delta': {
        const delta = payload.delta;
        if (
          isRecord(delta) &&
          delta.type === 'text_delta' &&
          typeof delta.text === 'string' &&
          delta.text
        )
          out.push({ type: 'text', text: delta.text });
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
