import pino from 'pino';
import { parseCatalog } from '../src/catalog/catalog-file';
import { AppError } from '../src/common/errors/app-error';
import { AppLogger } from '../src/common/logging/app-logger';
import { loadConfig } from '../src/config/load-config';
import { Endpoint, ProviderEndpoints } from '../src/models/provider-endpoints';
import {
  GenerationEvent,
  ProviderError,
} from '../src/models/providers/model-provider';
import { KeyCooldowns } from '../src/models/routing/key-cooldowns';
import { readFileSync } from 'node:fs';
import { FakeModelServer } from './support/fake-model-servers';

const messages = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Say hello' },
];

const shippedCatalog = readFileSync('config/catalog.json', 'utf8');

/** The endpoints of the shipped catalog as an instance with this environment resolves them. */
function endpointsWith(
  env: Record<string, string>,
  catalogText = shippedCatalog,
): ProviderEndpoints {
  const config = loadConfig(env);
  const log = new AppLogger(pino({ level: 'silent' }));
  return new ProviderEndpoints(
    parseCatalog(catalogText),
    config,
    new KeyCooldowns(null, config, log),
    log,
  );
}

/** One call of the endpoint with its next key, as the router makes it. */
function streamOf(
  endpoints: ProviderEndpoints,
  endpoint: Endpoint,
  upstreamModel = 'test-model',
): AsyncIterable<GenerationEvent> {
  const key = endpoints.nextKey(endpoint);
  return endpoint.provider.stream({
    upstreamModel,
    messages,
    maxOutputTokens: 100,
    ...(key?.secret ? { apiKey: key.secret } : {}),
  });
}

async function collect(
  endpoints: ProviderEndpoints,
  endpoint: Endpoint,
  upstreamModel = 'test-model',
): Promise<GenerationEvent[]> {
  const events: GenerationEvent[] = [];
  for await (const event of streamOf(endpoints, endpoint, upstreamModel))
    events.push(event);
  return events;
}

describe('model providers', () => {
  let fake: FakeModelServer;
  let providers: ProviderEndpoints;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    providers = endpointsWith({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
      ANTHROPIC_API_KEY: 'ak-test',
      ANTHROPIC_BASE_URL: fake.baseUrl,
      ECHO_DELAY_MS: '1',
    });
  });
  afterAll(async () => {
    await providers.onModuleDestroy();
    await fake.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Hello', ' there', ' friend'] };
    fake.requests.length = 0;
  });

  it('streams an OpenAI-compatible endpoint and reports the usage it sends', async () => {
    const events = await collect(
      providers,
      providers.configured('openai'),
      'gpt-4o-mini',
    );
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
    const iterator = streamOf(providers, providers.configured('openai'), 'm')[
      Symbol.asyncIterator
    ]();
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
      providers,
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
      collect(providers, providers.configured('openai')),
    ).rejects.toBeInstanceOf(ProviderError);
    expect(fake.requests).toHaveLength(1);
  });

  it('raises ProviderError when the stream breaks after some tokens', async () => {
    fake.mode = { kind: 'break-after', words: ['partial', ' answer'] };
    const seen: GenerationEvent[] = [];
    await expect(
      (async () => {
        for await (const event of streamOf(
          providers,
          providers.configured('openai'),
          'm',
        ))
          seen.push(event);
      })(),
    ).rejects.toBeInstanceOf(ProviderError);
    expect(seen.length).toBeGreaterThan(0);
  });

  it('answers provider_not_configured for a provider without credentials; local/echo needs none', async () => {
    const bare = endpointsWith({ ECHO_DELAY_MS: '0' });
    for (const name of ['openai', 'anthropic', 'nope']) {
      expect(() => bare.configured(name)).toThrow(AppError);
      try {
        bare.configured(name);
      } catch (error) {
        expect((error as AppError).code).toBe('provider_not_configured');
      }
    }
    const events = await collect(bare, bare.configured('local'));
    expect(events).toEqual([
      { type: 'text', text: 'Echo:' },
      { type: 'text', text: ' Say' },
      { type: 'text', text: ' hello' },
      { type: 'usage', inputTokens: 4, outputTokens: 3 },
    ]);
  });

  it('spreads calls over a key pool in turn, and skips a key while it rests', async () => {
    const pooled = endpointsWith(
      {
        OPENAI_API_KEY: 'sk-one, sk-two',
        OPENAI_API_KEY_2: 'sk-three,sk-one',
        OPENAI_BASE_URL: fake.baseUrl,
      },
      catalogWith({
        openai: {
          kind: 'openai',
          baseUrl: '${OPENAI_BASE_URL}',
          apiKeyEnv: ['OPENAI_API_KEY', 'OPENAI_API_KEY_2'],
        },
      }),
    );
    const openai = pooled.configured('openai');
    expect(openai.keys.map((key) => key.label)).toEqual([
      'OPENAI_API_KEY',
      'OPENAI_API_KEY#2',
      'OPENAI_API_KEY_2',
    ]);
    const used = [1, 2, 3, 4].map(() => pooled.nextKey(openai)?.secret);
    expect(used).toEqual(['sk-one', 'sk-two', 'sk-three', 'sk-one']);
    pooled.coolDown(openai, openai.keys[1], 60_000);
    const after = [1, 2, 3].map(() => pooled.nextKey(openai)?.secret);
    expect(after).toEqual(['sk-three', 'sk-one', 'sk-three']);
    // A 429 rests a key for one model: the other models still use it.
    pooled.coolDown(openai, openai.keys[0], 60_000, 'gpt-4o');
    expect(pooled.nextKey(openai, 'gpt-4o')?.secret).toBe('sk-three');
    expect(pooled.nextKey(openai, 'gpt-4o')?.secret).toBe('sk-three');
    expect(pooled.nextKey(openai, 'gpt-4o-mini')?.secret).toBe('sk-one');
    pooled.coolDown(openai, openai.keys[2], 60_000, 'gpt-4o');
    expect(pooled.hasKey(openai, 'gpt-4o')).toBe(false);
    expect(pooled.hasKey(openai, 'gpt-4o-mini')).toBe(true);
    for (const key of openai.keys) pooled.coolDown(openai, key, 60_000);
    expect(pooled.nextKey(openai)).toBeUndefined();
    expect(pooled.nextKey(openai, 'gpt-4o-mini')).toBeUndefined();
    // The keys are never part of what admins are shown.
    expect(JSON.stringify(pooled.describe())).not.toMatch(/sk-(one|two|three)/);
    await pooled.onModuleDestroy();
  });

  it("reads a declared endpoint's base URL from the environment, and leaves one unset unconfigured", async () => {
    const catalog = catalogWith({
      ollama: { kind: 'openai', baseUrl: '${OLLAMA_URL}/v1' },
      gemini: { kind: 'gemini', apiKeyEnv: 'GEMINI_API_KEY' },
    });
    const endpoints = endpointsWith({ OLLAMA_URL: fake.baseUrl }, catalog);
    const ollama = endpoints.configured('ollama');
    expect(ollama.keys).toEqual([{ label: 'none', fingerprint: 'none' }]);
    fake.requests.length = 0;
    await collect(endpoints, ollama, 'llama3');
    expect(fake.requests[0]).toEqual(
      expect.objectContaining({
        path: '/v1/chat/completions',
        model: 'llama3',
      }),
    );
    expect(fake.requests[0].authorization).toBeUndefined();
    expect(() => endpoints.configured('gemini')).toThrow(AppError);
    expect(endpoints.describe()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: 'gemini',
          unavailable: 'no key: GEMINI_API_KEY unset',
        }),
      ]),
    );
    const unset = endpointsWith({}, catalog);
    expect(unset.describe()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: 'ollama',
          unavailable: 'OLLAMA_URL unset',
        }),
      ]),
    );
    await endpoints.onModuleDestroy();
    await unset.onModuleDestroy();
  });
});

/** The shipped catalog with these endpoints declared (its models unchanged). */
function catalogWith(endpoints: Record<string, unknown>): string {
  const catalog = JSON.parse(shippedCatalog) as Record<string, unknown>;
  return JSON.stringify({ ...catalog, endpoints });
}
