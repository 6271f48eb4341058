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
  UpstreamRefusal,
} from './upstream-error';

/**
 * An OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter):
 * `POST <baseUrl>/chat/completions` with `stream: true` and `stream_options.include_usage`, the request
 * the AI SDK's openai-compatible provider sent (`max_tokens`, messages as `{role, content}` strings).
 */
export class OpenAiCompatibleProvider extends SseModelProvider {
  constructor(
    name: string,
    upstream: UpstreamSettings,
    transport: TransportSettings,
  ) {
    super(name, upstream, transport);
  }

  protected call(request: GenerationRequest): UpstreamCall {
    return {
      path: '/chat/completions',
      headers: openAiHeaders(
        request.apiKey ? { authorization: `Bearer ${request.apiKey}` } : {},
      ),
      body: openAiRequestBody(request),
    };
  }

  protected decoder(): StreamDecoder {
    return new OpenAiStreamDecoder();
  }
}

/** A chat completions request's headers, with the endpoint's way of sending the key (`auth`). */
export function openAiHeaders(
  auth: Record<string, string>,
): Record<string, string> {
  return {
    ...auth,
    'content-type': 'application/json',
    accept: 'text/event-stream',
  };
}

export function openAiRequestBody(request: GenerationRequest): string {
  return JSON.stringify({
    model: request.upstreamModel,
    messages: request.messages.map(toOpenAiMessage),
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: request.maxOutputTokens,
    ...(request.tools?.length
      ? {
          tools: request.tools.map((tool) => ({
            type: 'function',
            function: {
              name: tool.name,
              description: tool.description,
              parameters: tool.parameters,
            },
          })),
        }
      : {}),
  });
}

/** A message as chat completions take it: tool calls on the assistant's, `tool` messages for their results. */
function toOpenAiMessage(message: ChatMessage): Record<string, unknown> {
  if (message.role === 'tool')
    return {
      role: 'tool',
      tool_call_id: message.toolCallId,
      content: message.content,
    };
  if (message.role === 'assistant' && message.toolCalls?.length)
    return {
      role: 'assistant',
      content: message.content || null,
      tool_calls: message.toolCalls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      })),
    };
  return { role: message.role, content: message.content };
}

/**
 * Chunks → events: each non-empty `choices[0].delta.content` is a text event; the last `usage` seen is
 * reported once when the response is complete (only if the server reported it: without it the service
 * estimates, rather than billing zero tokens). `data: [DONE]` completes the response. A stream that ends
 * without [DONE] is complete if a `finish_reason` arrived (some servers omit [DONE]); without either it
 * was cut short and is a failure (as the AI SDK's "stream ended without a finish reason"). An `error`
 * payload (`data: {"error": {...}}`, OpenRouter's mid-stream errors) or an SSE `error` event fails it.
 * So does `finish_reason: content_filter` (Azure's content filter, OpenAI's and OpenRouter's moderation):
 * the answer was withheld or cut, and a stop that looks normal would hand the user an empty or truncated
 * answer as if complete; the text that passed the filter before it has been streamed already.
 * The usage's cached input tokens (`prompt_tokens_details.cached_tokens`: OpenAI, Azure, vLLM, OpenRouter;
 * DeepSeek's `prompt_cache_hit_tokens`) are a part of `prompt_tokens`, reported as `cachedInputTokens`.
 */
export class OpenAiStreamDecoder implements StreamDecoder {
  private finished = false;
  private usage: GenerationEvent | undefined;
  /** Tool calls as their deltas arrive (by `index`): the id and name come first, the arguments in pieces. */
  private readonly toolCalls = new Map<number, ToolCall>();

  event(
    data: string,
    event: string | undefined,
    out: GenerationEvent[],
  ): boolean {
    if (data === '[DONE]') {
      this.complete(out);
      return true;
    }
    const chunk = parseEventJson(data);
    if (
      (chunk.error !== undefined && chunk.error !== null) ||
      event === 'error'
    ) {
      throw new UpstreamError(
        `error event: ${errorMessageOf(chunk) ?? 'no message'}`,
      );
    }
    const choices = chunk.choices;
    if (Array.isArray(choices) && choices.length > 0) {
      const choice: unknown = choices[0];
      if (isRecord(choice)) {
        const delta = choice.delta;
        if (isRecord(delta)) {
          pushContent(delta.content, out);
          this.readToolCalls(delta.tool_calls);
        }
        if (choice.finish_reason === 'content_filter')
          throw new UpstreamRefusal(
            `stopped by the content filter${filteredCategories(choice)}`,
          );
        if (typeof choice.finish_reason === 'string' && choice.finish_reason)
          this.finished = true;
      }
    }
    this.readUsage(chunk.usage);
    return false;
  }

  end(out: GenerationEvent[]): void {
    if (!this.finished)
      throw new UpstreamError(
        'stream ended before the model finished (no finish_reason, no [DONE])',
      );
    this.complete(out);
  }

  /** The last usage a chunk carried wins: some servers send a running count on every chunk. */
  private readUsage(usage: unknown): void {
    if (
      !isRecord(usage) ||
      typeof usage.prompt_tokens !== 'number' ||
      typeof usage.completion_tokens !== 'number'
    )
      return;
    const cached = cachedTokensOf(usage);
    this.usage = {
      type: 'usage',
      inputTokens: usage.prompt_tokens,
      outputTokens: usage.completion_tokens,
      // A server that reports more cached tokens than prompt tokens is not believed past the prompt.
      ...(cached === undefined
        ? {}
        : { cachedInputTokens: Math.min(cached, usage.prompt_tokens) }),
    };
  }

  /** The tool calls, in the model's order, then the usage. */
  private complete(out: GenerationEvent[]): void {
    const calls = [...this.toolCalls.entries()].sort(([a], [b]) => a - b);
    for (const [, call] of calls) {
      if (!call.id || !call.name)
        throw new UpstreamError('a tool call came without its id or name');
      out.push({ type: 'tool_call', call });
    }
    if (this.usage) out.push(this.usage);
  }

  /** `delta.tool_calls`: `{ index, id?, function: { name?, arguments? } }`, the arguments as JSON text in pieces. */
  private readToolCalls(deltas: unknown): void {
    if (!Array.isArray(deltas)) return;
    for (const delta of deltas as unknown[]) {
      if (!isRecord(delta)) continue;
      const index = typeof delta.index === 'number' ? delta.index : 0;
      const call = this.toolCalls.get(index) ?? {
        id: '',
        name: '',
        arguments: '',
      };
      if (typeof delta.id === 'string' && delta.id) call.id = delta.id;
      const fn = delta.function;
      if (isRecord(fn)) {
        if (typeof fn.name === 'string') call.name += fn.name;
        if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
      }
      this.toolCalls.set(index, call);
    }
  }
}

/** A string delta, or (Mistral and some proxies) an array of content parts of which the text parts count. */
function pushContent(content: unknown, out: GenerationEvent[]): void {
  if (typeof content === 'string') {
    if (content) out.push({ type: 'text', text: content });
    return;
  }
  if (!Array.isArray(content)) return;
  for (const part of content as unknown[]) {
    if (
      isRecord(part) &&
      part.type === 'text' &&
      typeof part.text === 'string' &&
      part.text
    )
      out.push({ type: 'text', text: part.text });
  }
}

/** `prompt_tokens_details.cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens`; undefined when neither is reported. */
function cachedTokensOf(usage: Record<string, unknown>): number | undefined {
  const details = usage.prompt_tokens_details;
  if (isRecord(details) && isCount(details.cached_tokens))
    return details.cached_tokens;
  return isCount(usage.prompt_cache_hit_tokens)
    ? usage.prompt_cache_hit_tokens
    : undefined;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/**
 * ` (violence: medium)`: the categories Azure's `content_filter_results` marks as filtered, for the log;
 * empty when it names none (OpenAI sends no results). Only category names and severities: never content.
 */
function filteredCategories(choice: Record<string, unknown>): string {
  const results = choice.content_filter_results;
  if (!isRecord(results)) return '';
  const filtered = Object.entries(results)
    .filter(([, result]) => isRecord(result) && result.filtered === true)
    .map(([category, result]) => {
      const severity = isRecord(result) ? result.severity : undefined;
      return typeof severity === 'string'
        ? `${category}: ${severity}`
        : category;
    });
  return filtered.length > 0 ? ` (${filtered.join(', ')})` : '';
}
