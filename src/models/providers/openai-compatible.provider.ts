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

/**
 * An OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter):
 * `POST <baseUrl>/chat/completions` with `stream: true` and `stream_options.include_usage`, the request
 * the AI SDK's openai-compatible provider sent (`max_tokens`, messages as `{role, content}` strings).
 */
export class OpenAiCompatibleProvider extends SseModelProvider {
  private readonly headers: Record<string, string>;

  constructor(
    name: string,
    upstream: UpstreamSettings,
    transport: TransportSettings,
  ) {
    super(name, upstream, transport);
    this.headers = {
      authorization: `Bearer ${upstream.apiKey ?? ''}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    };
  }

  protected call(request: GenerationRequest): UpstreamCall {
    return {
      path: '/chat/completions',
      headers: this.headers,
      body: openAiRequestBody(request),
    };
  }

  protected decoder(): StreamDecoder {
    return new OpenAiStreamDecoder();
  }
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
        if (typeof choice.finish_reason === 'string' && choice.finish_reason)
          this.finished = true;
      }
    }
    const usage = chunk.usage;
    if (
      isRecord(usage) &&
      typeof usage.prompt_tokens === 'number' &&
      typeof usage.completion_tokens === 'number'
    ) {
      this.usage = {
        type: 'usage',
        inputTokens: usage.prompt_tokens,
        outputTokens: usage.completion_tokens,
      };
    }
    return false;
  }

  end(out: GenerationEvent[]): void {
    if (!this.finished)
      throw new UpstreamError(
        'stream ended before the model finished (no finish_reason, no [DONE])',
      );
    this.complete(out);
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
