import {
  GenerationEvent,
  GenerationRequest,
  ModelProvider,
  ProviderError,
} from '../../src/models/providers/model-provider';

interface Script {
  words: string[];
  /** Fail (a ProviderError) instead of sending the word at this index. */
  failAfter?: number;
}

const DEFAULT_SCRIPT: Script = { words: ['Hello', ' world'] };

/**
 * A model for the service tier: answers its script word by word, reports usage, fails where told, and can
 * be held before a word until the test releases it (an abort of the call ends it there).
 */
export class ScriptedProvider implements ModelProvider {
  calls = 0;
  script: Script = DEFAULT_SCRIPT;
  private hold?: { index: number; gate: Promise<void> };

  constructor(readonly name: string) {}

  isConfigured(): boolean {
    return true;
  }

  reset(): void {
    this.calls = 0;
    this.script = DEFAULT_SCRIPT;
    this.hold = undefined;
  }

  /** Holds the next calls before the word at `index`; answers the release. */
  holdBefore(index: number): () => void {
    let release = () => {};
    const gate = new Promise<void>((done) => (release = done));
    this.hold = { index, gate };
    return release;
  }

  async *stream(request: GenerationRequest): AsyncIterable<GenerationEvent> {
    this.calls += 1;
    const { words, failAfter } = this.script;
    const hold = this.hold;
    for (const [index, text] of words.entries()) {
      if (hold?.index === index)
        await untilReleasedOrAborted(hold.gate, request.signal);
      if (request.signal?.aborted) return;
      if (index === failAfter)
        throw new ProviderError(this.name, 'the upstream broke off');
      yield { type: 'text', text };
    }
    yield { type: 'usage', inputTokens: 5, outputTokens: words.length };
  }
}

function untilReleasedOrAborted(
  gate: Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  if (!signal) return gate;
  return Promise.race([
    gate,
    new Promise<void>((done) =>
      signal.addEventListener('abort', () => done(), { once: true }),
    ),
  ]);
}
