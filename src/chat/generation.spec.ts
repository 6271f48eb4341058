import { GenerationEvent, ModelProvider, ProviderError } from '../models/providers/model-provider';
import { generate } from './generation';

function provider(stream: (signal?: AbortSignal) => AsyncIterable<GenerationEvent>): ModelProvider {
  return { name: 'fake', isConfigured: () => true, stream: (request) => stream(request.signal) };
}

const request = { upstreamModel: 'm', messages: [{ role: 'user' as const, content: 'hi' }], maxOutputTokens: 10 };

describe('generate', () => {
  it('passes text on as it comes and keeps the reported usage', async () => {
    const seen: string[] = [];
    const result = await generate(
      provider(async function* () {
        yield { type: 'text', text: 'a' };
        yield { type: 'text', text: '' };
        yield { type: 'text', text: 'b' };
        yield { type: 'usage', inputTokens: 3, outputTokens: 2 };
      }),
      request,
      { timeoutMs: 1000, onText: (text) => seen.push(text) },
    );
    expect(seen).toEqual(['a', 'b']);
    expect(result).toEqual({ text: 'ab', chunks: 2, usage: { inputTokens: 3, outputTokens: 2 } });
  });

  it('reports a provider error with the text delivered before it', async () => {
    const result = await generate(
      provider(async function* () {
        yield { type: 'text', text: 'part' };
        throw new ProviderError('fake', 'connection reset');
      }),
      request,
      { timeoutMs: 1000, onText: () => undefined },
    );
    expect(result).toMatchObject({ text: 'part', chunks: 1, failure: 'provider_error', failureReason: 'fake: connection reset' });
  });

  it('times out a silent provider and aborts it', async () => {
    let aborted = false;
    const result = await generate(
      provider(async function* (signal) {
        yield { type: 'text', text: 'x' };
        await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
        aborted = true;
      }),
      request,
      { timeoutMs: 50, onText: () => undefined },
    );
    expect(result).toMatchObject({ text: 'x', failure: 'provider_timeout' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(aborted).toBe(true);
  });

  it('drops NUL characters, which the database could not store', async () => {
    const seen: string[] = [];
    const result = await generate(
      provider(async function* () {
        yield { type: 'text', text: 'a\u0000b' };
        yield { type: 'text', text: '\u0000' };
      }),
      request,
      { timeoutMs: 1000, onText: (text) => seen.push(text) },
    );
    expect(seen).toEqual(['ab']);
    expect(result).toMatchObject({ text: 'ab', chunks: 1 });
  });
});
