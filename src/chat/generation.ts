import { GenerationEvent, GenerationRequest, ModelProvider, ProviderError } from '../models/providers/model-provider';
import { FailureCode } from './live/live-event';

/** What one provider call produced: all text, the number of chunks, the reported usage, or how it failed. */
export interface Generation {
  text: string;
  chunks: number;
  usage?: { inputTokens: number; outputTokens: number };
  failure?: FailureCode;
  /** For the log only: the provider's own words, never sent to the client. */
  failureReason?: string;
}

class ProviderSilence extends Error {}

/**
 * Calls the provider once and passes each text chunk on as it arrives. The provider may stay silent at
 * most `timeoutMs` before the first event and between two events; then the call is aborted as timed out.
 * Never throws: a failure is part of the result, with the text delivered before it.
 */
export async function generate(provider: ModelProvider, request: Omit<GenerationRequest, 'signal'>, options: { timeoutMs: number; onText: (text: string) => void }): Promise<Generation> {
  const abort = new AbortController();
  const result: Generation = { text: '', chunks: 0 };
  let events: AsyncIterator<GenerationEvent> | undefined;
  try {
    events = provider.stream({ ...request, signal: abort.signal })[Symbol.asyncIterator]();
    for (;;) {
      const next = await withinSilenceLimit(events.next(), options.timeoutMs);
      if (next.done) return result;
      const event = next.value;
      if (event.type === 'usage') result.usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
      else {
        // PostgreSQL text cannot hold NUL: an answer containing one could be delivered but never stored.
        const text = event.text.replaceAll('\u0000', '');
        if (!text) continue;
        result.text += text;
        result.chunks += 1;
        options.onText(text);
      }
    }
  } catch (error) {
    abort.abort();
    // Not awaited: a generator with a pending next() only returns once that settles.
    events?.return?.(undefined).catch(() => undefined);
    result.failure = error instanceof ProviderSilence ? 'provider_timeout' : 'provider_error';
    result.failureReason = error instanceof ProviderSilence ? `no event for ${options.timeoutMs} ms` : error instanceof ProviderError ? error.message : `unexpected ${error instanceof Error ? error.name : typeof error}`;
    return result;
  }
}

function withinSilenceLimit<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProviderSilence()), timeoutMs);
  });
  return Promise.race([promise, silence]).finally(() => clearTimeout(timer));
}
