import { LanguageModel, streamText } from 'ai';
import { GenerationEvent, GenerationRequest, ModelProvider, ProviderError } from './model-provider';

/**
 * A provider reached through the Vercel AI SDK: OpenAI-compatible endpoints and Anthropic. Text arrives
 * as the upstream streams it; usage comes from the provider's own report at the end of the stream.
 * No automatic retries: a retry would be a second billed provider call.
 */
export class AiSdkProvider implements ModelProvider {
  constructor(
    readonly name: string,
    private readonly configured: boolean,
    private readonly model: (upstreamModel: string) => LanguageModel,
  ) {}

  isConfigured(): boolean {
    return this.configured;
  }

  async *stream(request: GenerationRequest): AsyncIterable<GenerationEvent> {
    const result = streamText({
      model: this.model(request.upstreamModel),
      messages: request.messages,
      // System messages come from Skill instructions and from the caller's own conversation.
      allowSystemInMessages: true,
      maxOutputTokens: request.maxOutputTokens,
      abortSignal: request.signal,
      maxRetries: 0,
      // The SDK's default prints the whole error (stack, request body with the user's messages) to the
      // console; the error reaches us as a stream part instead and is reported without them.
      onError: () => undefined,
    });
    try {
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta' && part.text) yield { type: 'text', text: part.text };
        else if (part.type === 'error') throw new ProviderError(this.name, describe(part.error));
        else if (part.type === 'finish') {
          yield { type: 'usage', inputTokens: part.totalUsage.inputTokens ?? 0, outputTokens: part.totalUsage.outputTokens ?? 0 };
        }
      }
    } catch (error) {
      // A broken connection surfaces as a thrown SDK error rather than an error part: same meaning.
      throw error instanceof ProviderError ? error : new ProviderError(this.name, describe(error));
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0].slice(0, 300);
  return String(error).slice(0, 300);
}
