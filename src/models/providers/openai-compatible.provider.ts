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
    messages: request.messages.map(({ role, content }: ChatMessage) => ({
      role,
      content,
    })),
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: request.maxOutputTokens,
  });
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

  event(
    data: string,
    event: string | undefined,
    out: GenerationEvent[],
  ): boolean {
    if (data === '[DONE]') {
      if (this.usage) out.push(this.usage);
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
        if (isRecord(delta)) pushContent(delta.content, out);
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
    if (this.usage) out.push(this.usage);
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
