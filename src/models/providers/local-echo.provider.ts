import { setTimeout as sleep } from 'node:timers/promises';
import {
  GenerationEvent,
  GenerationRequest,
  ModelProvider,
} from './model-provider';

/**
 * The built-in `local/echo` model: a real streaming provider that needs no key. It answers
 * "Echo: <last user message>" word by word with a small delay and reports token usage (one token per
 * whitespace-separated word), deterministically, so the service works and can be tried offline.
 */
export class LocalEchoProvider implements ModelProvider {
  readonly name = 'local';

  constructor(private readonly delayMs: number) {}

  isConfigured(): boolean {
    return true;
  }

  async *stream(request: GenerationRequest): AsyncIterable<GenerationEvent> {
    const lastUser = [...request.messages]
      .reverse()
      .find((message) => message.role === 'user');
    const words = [
      'Echo:',
      ...(lastUser?.content ?? '').split(/\s+/).filter(Boolean),
    ].slice(0, request.maxOutputTokens);
    let produced = 0;
    for (const word of words) {
      if (request.signal?.aborted) break;
      if (produced > 0 && this.delayMs > 0) await sleep(this.delayMs);
      yield { type: 'text', text: produced === 0 ? word : ` ${word}` };
      produced += 1;
    }
    yield {
      type: 'usage',
      inputTokens: countTokens(
        request.messages.map((message) => message.content).join(' '),
      ),
      outputTokens: produced,
    };
  }
}

function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
