import {
  GenerationEvent,
  GenerationRequest,
  ModelProvider,
  ProviderError,
  ProviderFailure,
  ToolCall,
} from '../models/providers/model-provider';
import { FailureCode } from './live/live-event';

/** What one provider call produced: all text, the number of chunks, the reported usage, or how it failed. */
export interface Generation {
  text: string;
  chunks: number;
  usage?: StepUsage;
  /** The tools the model asked to call (only when it was offered tools), in the order it wrote them. */
  toolCalls?: ToolCall[];
  /** A run's steps whose tool calls were run (0 or absent: the model never called a tool). */
  toolSteps?: number;
  /** A run's tool calls as they ended, with the credits each is charged (a run that used tools). */
  toolOutcomes?: {
    id: string;
    tool: string;
    status: string;
    credits: number;
  }[];
  /** Credits the run's tool calls cost, on top of its model calls. */
  toolCredits?: number;
  /** A run's model calls, each with its usage (a run of one call may leave it out). */
  steps?: StepUsage[];
  failure?: FailureCode;
  /** The run was stopped (POST /v1/chat/stop): the text so far is the answer. */
  stopped?: boolean;
  /** For the log only: the provider's own words, never sent to the client. */
  failureReason?: string;
  /** What kind of failure the provider's was (for the router: retry, cool the key down, fall back). */
  providerFailure?: ProviderFailure;
  /** The provider's silence before the first event ran out (a first-token timeout). */
  firstTokenTimedOut?: boolean;
}

/** One model call's tokens; `cachedInputTokens` (of the input) were read from the provider's cache. */
export interface StepUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
}

/**
 * Calls the provider once and passes each text chunk on as it arrives. The provider may stay silent at
 * most `firstEventTimeoutMs` (default `timeoutMs`) before the first event and `timeoutMs` between two
 * events; then the call is aborted as timed out (one timer for the whole call, pushed back at every
 * event). Never throws: a failure is part of the result, with the text delivered before it. Resolves at
 * the timeout even if the provider ignores the abort. When `stop` aborts, the provider call is aborted and
 * the generation ends at once, stopped, with its text.
 */
export function generate(
  provider: ModelProvider,
  request: Omit<GenerationRequest, 'signal'>,
  options: {
    timeoutMs: number;
    firstEventTimeoutMs?: number;
    onText: (text: string) => void;
    stop?: AbortSignal;
  },
): Promise<Generation> {
  const abort = new AbortController();
  const result: Generation = { text: '', chunks: 0 };
  return new Promise((resolve) => {
    let done = false;
    let heard = false;
    const finish = (
      failure?: FailureCode,
      reason?: string,
      kind?: ProviderFailure,
    ) => {
      if (done) return;
      done = true;
      clearTimeout(silence);
      options.stop?.removeEventListener('abort', stopped);
      if (failure) {
        abort.abort();
        result.failure = failure;
        result.failureReason = reason;
        if (kind) result.providerFailure = kind;
      }
      resolve(result);
    };
    const silenceRanOut = () => {
      if (!heard) result.firstTokenTimedOut = true;
      const limit = heard
        ? options.timeoutMs
        : (options.firstEventTimeoutMs ?? options.timeoutMs);
      finish('provider_timeout', `no event for ${limit} ms`);
    };
    // Before the first event the silence may last firstEventTimeoutMs; refresh() below re-arms the timer
    // with the delay it was created with, so the first event replaces it with one of timeoutMs.
    let silence = setTimeout(
      silenceRanOut,
      options.firstEventTimeoutMs ?? options.timeoutMs,
    );
    const stopped = () => {
      if (done) return;
      result.stopped = true;
      abort.abort();
      finish();
    };
    if (options.stop?.aborted) {
      stopped();
      return;
    }
    options.stop?.addEventListener('abort', stopped, { once: true });
    const receive = (event: GenerationEvent) => {
      if (done) return;
      if (heard) silence.refresh();
      else {
        heard = true;
        clearTimeout(silence);
        silence = setTimeout(silenceRanOut, options.timeoutMs);
      }
      if (event.type === 'usage') {
        result.usage = {
          inputTokens: event.inputTokens,
          outputTokens: event.outputTokens,
          ...(event.cachedInputTokens
            ? {
                cachedInputTokens: Math.min(
                  event.cachedInputTokens,
                  event.inputTokens,
                ),
              }
            : {}),
        };
        return;
      }
      if (event.type === 'tool_call') {
        (result.toolCalls ??= []).push(event.call);
        return;
      }
      // PostgreSQL text cannot hold NUL: an answer containing one could be delivered but never stored.
      const text = event.text.includes('\u0000')
        ? event.text.replaceAll('\u0000', '')
        : event.text;
      if (!text) return;
      result.text += text;
      result.chunks += 1;
      options.onText(text);
    };
    const upstream = { ...request, signal: abort.signal };
    const consume = async () => {
      // Pushed events where the provider can (no async step per event), else its async iterable.
      if (provider.pump) return provider.pump(upstream, receive);
      for await (const event of provider.stream(upstream)) {
        if (done) return;
        receive(event);
      }
    };
    consume().then(
      () => finish(),
      (error: unknown) =>
        error instanceof ProviderError
          ? finish('provider_error', error.message, error.failure)
          : finish(
              'provider_error',
              `unexpected ${error instanceof Error ? error.name : typeof error}`,
            ),
    );
  });
}
