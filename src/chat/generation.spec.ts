import {
  GenerationEvent,
  ModelProvider,
  ProviderError,
} from '../models/providers/model-provider';
import { generate } from './generation';

/** A provider streaming the fake's events: a plain generator for the fakes that never wait, else an async one. */
function provider(
  events: (
    signal?: AbortSignal,
  ) => Iterable<GenerationEvent> | AsyncIterable<GenerationEvent>,
): ModelProvider {
  return {
    name: 'fake',
    stream: (request) => streamOf(events(request.signal)),
  };
}

async function* streamOf(
  events: Iterable<GenerationEvent> | AsyncIterable<GenerationEvent>,
): AsyncIterable<GenerationEvent> {
  for await (const event of events) yield event;
}

const request = {
  upstreamModel: 'm',
  messages: [{ role: 'user' as const, content: 'hi' }],
  maxOutputTokens: 10,
};

describe('generate', () => {
  it('keeps the tool calls the model made, in order, apart from its text', async () => {
    const seen: string[] = [];
    const call = (id: string) => ({
      id,
      name: 'files_search',
      arguments: '{}',
    });
    const result = await generate(
      provider(function* () {
        yield { type: 'text', text: 'Looking.' };
        yield { type: 'tool_call', call: call('a') };
        yield { type: 'tool_call', call: call('b') };
        yield { type: 'usage', inputTokens: 3, outputTokens: 9 };
      }),
      request,
      { timeoutMs: 1000, onText: (text) => seen.push(text) },
    );
    expect(seen).toEqual(['Looking.']);
    expect(result).toEqual(
      expect.objectContaining({
        text: 'Looking.',
        chunks: 1,
        toolCalls: [call('a'), call('b')],
      }),
    );
  });

  it('passes text on as it comes and keeps the reported usage', async () => {
    const seen: string[] = [];
    const result = await generate(
      provider(function* () {
        yield { type: 'text', text: 'a' };
        yield { type: 'text', text: '' };
        yield { type: 'text', text: 'b' };
        yield { type: 'usage', inputTokens: 3, outputTokens: 2 };
      }),
      request,
      { timeoutMs: 1000, onText: (text) => seen.push(text) },
    );
    expect(seen).toEqual(['a', 'b']);
    expect(result).toEqual({
      text: 'ab',
      chunks: 2,
      usage: { inputTokens: 3, outputTokens: 2 },
    });
  });

  it('reports a provider error with the text delivered before it', async () => {
    const result = await generate(
      provider(function* () {
        yield { type: 'text', text: 'part' };
        throw new ProviderError('fake', 'connection reset');
      }),
      request,
      { timeoutMs: 1000, onText: () => undefined },
    );
    expect(result).toMatchObject({
      text: 'part',
      chunks: 1,
      failure: 'provider_error',
      failureReason: 'fake: connection reset',
    });
  });

  it('ends stopped at once when the stop signal aborts: the provider call is aborted, the text so far kept, no failure', async () => {
    const stop = new AbortController();
    let providerAborted = false;
    const result = await generate(
      provider(function* (signal) {
        yield { type: 'text', text: 'so far' };
        stop.abort();
        providerAborted = signal?.aborted === true;
        yield { type: 'text', text: ' never delivered' };
      }),
      request,
      { timeoutMs: 1000, onText: () => undefined, stop: stop.signal },
    );
    expect(result).toEqual({ text: 'so far', chunks: 1, stopped: true });
    expect(providerAborted).toBe(true);
  });

  it('does not call the provider after a stop that came before the call', async () => {
    const stop = new AbortController();
    stop.abort();
    let called = false;
    const result = await generate(
      provider(function* () {
        called = true;
        yield { type: 'text', text: 'x' };
      }),
      request,
      { timeoutMs: 1000, onText: () => undefined, stop: stop.signal },
    );
    expect(result).toEqual({ text: '', chunks: 0, stopped: true });
    expect(called).toBe(false);
  });

  it('times out a silent provider and aborts it', async () => {
    let aborted = false;
    const result = await generate(
      provider(async function* (signal) {
        yield { type: 'text', text: 'x' };
        await new Promise<void>((resolve) =>
          signal?.addEventListener('abort', () => resolve()),
        );
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
      provider(function* () {
        yield { type: 'text', text: 'a\u0000b' };
        yield { type: 'text', text: '\u0000' };
      }),
      request,
      { timeoutMs: 1000, onText: (text) => seen.push(text) },
    );
    expect(seen).toEqual(['ab']);
    expect(result).toMatchObject({ text: 'ab', chunks: 1 });
  });

  describe('with a provider that pushes its events (pump)', () => {
    function pushing(
      pump: (
        sink: (event: GenerationEvent) => void,
        signal?: AbortSignal,
      ) => Promise<void>,
    ): ModelProvider {
      return {
        name: 'pushing',
        stream: () => {
          throw new Error('the pipeline must use pump');
        },
        pump: (request, sink) => pump(sink, request.signal),
      };
    }

    it('passes text on as it is pushed and keeps the usage', async () => {
      const seen: string[] = [];
      const result = await generate(
        pushing((sink) => {
          sink({ type: 'text', text: 'x' });
          sink({ type: 'text', text: '' });
          sink({ type: 'text', text: 'y\u0000' });
          sink({ type: 'usage', inputTokens: 4, outputTokens: 2 });
          return Promise.resolve();
        }),
        request,
        { timeoutMs: 1000, onText: (text) => seen.push(text) },
      );
      expect(seen).toEqual(['x', 'y']);
      expect(result).toEqual({
        text: 'xy',
        chunks: 2,
        usage: { inputTokens: 4, outputTokens: 2 },
      });
    });

    it('reports a rejected pump as a provider error with the text before it', async () => {
      const result = await generate(
        pushing((sink) => {
          sink({ type: 'text', text: 'half' });
          return Promise.reject(new ProviderError('pushing', 'HTTP 500: boom'));
        }),
        request,
        { timeoutMs: 1000, onText: () => undefined },
      );
      expect(result).toMatchObject({
        text: 'half',
        failure: 'provider_error',
        failureReason: 'pushing: HTTP 500: boom',
      });
    });

    it('times out a silent pump, aborts it and ignores what it pushes afterwards', async () => {
      let late: ((event: GenerationEvent) => void) | undefined;
      let aborted = false;
      const seen: string[] = [];
      const result = await generate(
        pushing((sink, signal) => {
          sink({ type: 'text', text: 'start' });
          late = sink;
          return new Promise<void>((resolve) =>
            signal?.addEventListener(
              'abort',
              () => ((aborted = true), resolve()),
            ),
          );
        }),
        request,
        { timeoutMs: 50, onText: (text) => seen.push(text) },
      );
      late?.({ type: 'text', text: 'too late' });
      expect(aborted).toBe(true);
      expect(result).toMatchObject({
        text: 'start',
        failure: 'provider_timeout',
      });
      expect(seen).toEqual(['start']);
    });
  });
});
