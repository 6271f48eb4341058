import { loadConfig } from '../src/config/load-config';
import { AppError } from '../src/common/errors/app-error';
import { ModelProviders } from '../src/models/model-providers';
import {
  GenerationEvent,
  ModelProvider,
  ProviderError,
} from '../src/models/providers/model-provider';
import { FakeModelServer } from './support/fake-model-servers';

const messages = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Say hello' },
];

async function collect(
  provider: ModelProvider,
  upstreamModel = 'test-model',
): Promise<GenerationEvent[]> {
  const events: GenerationEvent[] = [];
  for await (const event of provider.stream({
    upstreamModel,
    messages,
    maxOutputTokens: 100,
  }))
    events.push(event);
  return events;
}

describe('model providers', () => {
  let fake: FakeModelServer;
  let providers: ModelProviders;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    providers = new ModelProviders(
      loadConfig({
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseUrl,
        ANTHROPIC_API_KEY: 'ak-test',
        ANTHROPIC_BASE_URL: fake.baseUrl,
        ECHO_DELAY_MS: '1',
      }),
    );
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Hello', ' there', ' friend'] };
    fake.requests.length = 0;
  });

  it('streams an OpenAI-compatible endpoint and reports the usage it sends', async () => {
    const events = await collect(providers.configured('openai'), 'gpt-4o-mini');
    expect(events).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' there' },
      { type: 'text', text: ' friend' },
      { type: 'usage', inputTokens: 7, outputTokens: 3 },
    ]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toEqual(
      expect.objectContaining({
        path: '/chat/completions',
        authorization: 'Bearer sk-test',
        model: 'gpt-4o-mini',
        stream: true,
        messages,
        stream_options: { include_usage: true },
      }),
    );
  });

  it('hands each token on as the provider sends it (no buffering)', async () => {
    let release!: () => void;
    fake.mode = {
      kind: 'ok',
      words: ['first', ' last'],
      holdLast: new Promise<void>((done) => (release = done)),
    };
    const iterator = providers
      .configured('openai')
      .stream({ upstreamModel: 'm', messages, maxOutputTokens: 10 })
      [Symbol.asyncIterator]();
    // The provider holds the last word back: the first one must already be here.
    expect((await iterator.next()).value).toEqual({
      type: 'text',
      text: 'first',
    });
    release();
    const rest: GenerationEvent[] = [];
    for (
      let next = await iterator.next();
      !next.done;
      next = await iterator.next()
    )
      rest.push(next.value);
    expect(rest[0]).toEqual({ type: 'text', text: ' last' });
  });

  it('streams Anthropic and reports its usage', async () => {
    const events = await collect(
      providers.configured('anthropic'),
      'claude-haiku-4-5',
    );
    expect(
      events
        .filter((event) => event.type === 'text')
        .map((event) => (event as { text: string }).text)
        .join(''),
    ).toBe('Hello there friend');
    expect(events.at(-1)).toEqual({
      type: 'usage',
      inputTokens: 7,
      outputTokens: 3,
    });
    expect(fake.requests[0]).toEqual(
      expect.objectContaining({
        path: '/messages',
        apiKey: 'ak-test',
        model: 'claude-haiku-4-5',
        stream: true,
      }),
    );
  });

  it('raises ProviderError when the upstream fails before the first token, without retrying', async () => {
    fake.mode = { kind: 'fail-before' };
    await expect(
      collect(providers.configured('openai')),
    ).rejects.toBeInstanceOf(ProviderError);
    expect(fake.requests).toHaveLength(1);
  });

  it('raises ProviderError when the stream breaks after some tokens', async () => {
    fake.mode = { kind: 'break-after', words: ['partial', ' answer'] };
    const seen: GenerationEvent[] = [];
    await expect(
      (async () => {
        for await (const event of providers
          .configured('openai')
          .stream({ upstreamModel: 'm', messages, maxOutputTokens: 10 }))
          seen.push(event);
      })(),
    ).rejects.toBeInstanceOf(ProviderError);
    expect(seen.length).toBeGreaterThan(0);
  });

  it('answers provider_not_configured for a provider without credentials; local/echo needs none', async () => {
    const bare = new ModelProviders(loadConfig({ ECHO_DELAY_MS: '0' }));
    for (const name of ['openai', 'anthropic', 'nope']) {
      expect(() => bare.configured(name)).toThrow(AppError);
      try {
        bare.configured(name);
      } catch (error) {
        expect((error as AppError).code).toBe('provider_not_configured');
      }
    }
    const events = await collect(bare.configured('local'));
    expect(events).toEqual([
      { type: 'text', text: 'Echo:' },
      { type: 'text', text: ' Say' },
      { type: 'text', text: ' hello' },
      { type: 'usage', inputTokens: 4, outputTokens: 3 },
    ]);
  });
});
