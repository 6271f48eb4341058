import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CatalogError, loadCatalogFile, parseCatalog } from './catalog-file';

/** The shipped file as raw JSON, to be broken in copies: entries are plain objects. */
interface RawCatalog {
  plans: Record<string, unknown>[];
  models: Record<string, unknown>[];
}

const shipped = JSON.parse(
  readFileSync(
    resolve(__dirname, '..', '..', 'config', 'catalog.json'),
    'utf8',
  ),
) as RawCatalog;

function errorOf(catalog: unknown): string {
  try {
    parseCatalog(JSON.stringify(catalog), 'test.json');
  } catch (error) {
    if (error instanceof CatalogError) return error.message;
    throw error;
  }
  throw new Error('expected a CatalogError');
}

function withPlan(index: number, patch: Record<string, unknown>) {
  const copy = structuredClone(shipped);
  copy.plans[index] = { ...copy.plans[index], ...patch };
  return copy;
}

describe('catalog file', () => {
  it('ships the four plans, local/echo and openai/gpt-4o-mini on every plan', () => {
    const catalog = loadCatalogFile('config/catalog.json');
    expect(catalog.plans.map((plan) => plan.code)).toEqual([
      'free',
      'pro',
      'team',
      'enterprise',
    ]);
    for (const plan of catalog.plans)
      expect(plan.models).toEqual(
        expect.arrayContaining(['local/echo', 'openai/gpt-4o-mini']),
      );
    expect(
      catalog.models.find((model) => model.id === 'openai/gpt-4o-mini')
        ?.provider,
    ).toBe('openai');
    expect(
      catalog.plans
        .filter((plan) => plan.checkoutAllowed)
        .map((plan) => plan.code),
    ).toEqual(['pro', 'team']);
  });

  it('prices built-in tools per call in its optional tools section; MCP tools are not priced here', () => {
    expect(loadCatalogFile('config/catalog.json').tools).toEqual({
      'files.search': { perCall: 0 },
    });
    expect(
      parseCatalog(
        JSON.stringify({
          ...shipped,
          tools: { 'files.search': { perCall: 2 } },
        }),
      ).tools,
    ).toEqual({ 'files.search': { perCall: 2 } });
    expect(
      parseCatalog(
        JSON.stringify({ plans: shipped.plans, models: shipped.models }),
      ).tools,
    ).toEqual({});
    expect(
      errorOf({
        ...shipped,
        tools: { 'mcp.github.create_issue': { perCall: 1 } },
      }),
    ).toContain('built-in tool id');
    expect(
      errorOf({ ...shipped, tools: { 'files.search': { perCall: -1 } } }),
    ).toContain('tools');
  });

  it('names the bad entry by index and code', () => {
    const message = errorOf(
      withPlan(1, {
        price: { amount: 2000, currency: 'dollars', interval: 'month' },
      }),
    );
    expect(message).toContain('Invalid catalog test.json');
    expect(message).toContain('plans[1] (pro).price.currency');
  });

  it('names a model entry with a bad id', () => {
    const copy = structuredClone(shipped);
    copy.models[1].id = 'no-slash';
    expect(errorOf(copy)).toContain(
      'models[1] (no-slash).id: must look like provider/name',
    );
  });

  it('gives each model a context window (128,000 tokens unless set) larger than its answers', () => {
    const catalog = loadCatalogFile('config/catalog.json');
    expect(
      catalog.models.find((model) => model.id === 'anthropic/claude-haiku-4-5')
        ?.contextWindow,
    ).toBe(200_000);
    const unset = structuredClone(shipped);
    delete unset.models[1].contextWindow;
    expect(
      parseCatalog(JSON.stringify(unset), 'test.json').models[1].contextWindow,
    ).toBe(128_000);
    const tooSmall = structuredClone(shipped);
    tooSmall.models[1].contextWindow = 4096;
    tooSmall.models[1].maxOutputTokens = 4096;
    expect(errorOf(tooSmall)).toContain(
      'models[1] (openai/gpt-4o-mini).maxOutputTokens: maxOutputTokens must be below contextWindow',
    );
  });

  it('refuses unknown fields, unknown model references and duplicates', () => {
    expect(errorOf(withPlan(0, { discount: 5 }))).toMatch(
      /plans\[0\] \(free\).*discount/,
    );
    expect(
      errorOf(withPlan(2, { models: ['local/echo', 'acme/unknown'] })),
    ).toContain('plans[2] (team).models: unknown model id "acme/unknown"');
    const dup = structuredClone(shipped);
    dup.plans.push({ ...dup.plans[1] });
    expect(errorOf(dup)).toContain('plans[4] (pro): duplicate plan code');
  });

  it('refuses free or enterprise as checkout plans, and a missing free plan', () => {
    expect(errorOf(withPlan(3, { checkoutAllowed: true }))).toContain(
      'plans[3] (enterprise).checkoutAllowed',
    );
    const noFree = structuredClone(shipped);
    noFree.plans.shift();
    expect(errorOf(noFree)).toContain('the "free" plan is required');
  });

  it('refuses ids that differ only by case, and a free plan with a price', () => {
    const copy = structuredClone(shipped);
    copy.models.push({ ...copy.models[0], id: 'local/Echo' });
    expect(errorOf(copy)).toContain(
      'models[3] (local/Echo): duplicate model id',
    );
    expect(
      errorOf(
        withPlan(0, {
          price: { amount: 100, currency: 'USD', interval: 'month' },
        }),
      ),
    ).toContain('the free plan must cost 0');
  });

  it('accepts a file saved with a UTF-8 byte order mark', () => {
    expect(
      parseCatalog(`\uFEFF${JSON.stringify(shipped)}`, 'bom.json').plans,
    ).toHaveLength(4);
  });

  it('refuses a model provider it has no adapter for', () => {
    const copy = structuredClone(shipped);
    copy.models[0].provider = 'acme';
    expect(errorOf(copy)).toContain('models[0] (local/echo).provider');
  });

  it('reports unreadable and non-JSON files with the file name', () => {
    expect(() => loadCatalogFile('config/missing.json')).toThrow(
      /Invalid catalog config\/missing.json:\n {2}- cannot be read \(ENOENT\)/,
    );
    expect(() => parseCatalog('{ nope', 'x.json')).toThrow(
      /Invalid catalog x.json:\n {2}- is not valid JSON/,
    );
  });
});

describe('catalog endpoints and fallbacks', () => {
  function withModels(
    models: Record<string, unknown>[],
    endpoints?: Record<string, unknown>,
  ) {
    const copy = structuredClone(shipped) as RawCatalog & {
      endpoints?: Record<string, unknown>;
    };
    copy.models = [...copy.models, ...models];
    if (endpoints) copy.endpoints = endpoints;
    return copy;
  }
  const model = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    name: id,
    upstreamModel: 'm',
    pricing: { per1kInputTokens: 2, per1kOutputTokens: 4 },
    maxOutputTokens: 100,
    ...extra,
  });

  it('accepts models on declared endpoints of every kind, with fallbacks and a cached price', () => {
    const catalog = parseCatalog(
      JSON.stringify(
        withModels(
          [
            model('gemini/flash', {
              endpoint: 'gemini',
              fallbacks: ['ollama/llama'],
              pricing: {
                per1kInputTokens: 2,
                per1kCachedInputTokens: 1,
                per1kOutputTokens: 4,
              },
            }),
            model('ollama/llama', { endpoint: 'ollama' }),
            model('azure/gpt', { endpoint: 'azure' }),
            model('bedrock/claude', { endpoint: 'aws' }),
          ],
          {
            gemini: { kind: 'gemini', apiKeyEnv: 'GEMINI_API_KEY' },
            ollama: {
              kind: 'openai',
              baseUrl: '${OLLAMA_URL:-http://localhost:11434/v1}',
            },
            azure: {
              kind: 'azure',
              baseUrl: 'https://res.openai.azure.com/openai',
              apiKeyEnv: ['AZURE_KEY_1', 'AZURE_KEY_2'],
            },
            aws: { kind: 'bedrock', region: 'us-east-1' },
          },
        ),
      ),
    );
    expect(catalog.endpoints.gemini).toEqual({
      kind: 'gemini',
      apiKeyEnv: 'GEMINI_API_KEY',
      baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    });
    expect(catalog.endpoints.aws).toEqual(
      expect.objectContaining({
        accessKeyIdEnv: 'AWS_ACCESS_KEY_ID',
        secretAccessKeyEnv: 'AWS_SECRET_ACCESS_KEY',
      }),
    );
    expect(catalog.endpoints.azure).toEqual(
      expect.objectContaining({ apiVersion: '2024-10-21' }),
    );
    const flash = catalog.models.find((entry) => entry.id === 'gemini/flash');
    expect(flash?.fallbacks).toEqual(['ollama/llama']);
    expect(flash?.pricing.per1kCachedInputTokens).toBe(1);
  });

  it('names an unknown endpoint, an unknown, repeated or self fallback', () => {
    const message = errorOf(
      withModels([
        model('x/one', { endpoint: 'nowhere' }),
        model('x/two', {
          provider: 'openai',
          fallbacks: ['x/two', 'x/ghost', 'local/echo', 'local/echo'],
        }),
      ]),
    );
    expect(message).toContain('(x/one).endpoint: unknown endpoint "nowhere"');
    expect(message).toContain(
      '(x/two).fallbacks: a model cannot fall back to itself',
    );
    expect(message).toContain('(x/two).fallbacks: unknown model id "x/ghost"');
    expect(message).toContain('(x/two).fallbacks: lists a model twice');
  });

  it('refuses endpoint settings that cannot work, naming them', () => {
    const settings = errorOf(
      withModels([], {
        azure: { kind: 'azure', baseUrl: 'https://r.openai.azure.com/openai' },
        gem: { kind: 'gemini', apiKeyEnv: 'not a name' },
        odd: { kind: 'palm', baseUrl: 'http://x' },
      }),
    );
    expect(settings).toContain(
      'endpoints.azure.apiKeyEnv: needs either apiKeyEnv or entra',
    );
    expect(settings).toContain(
      'endpoints.gem.apiKeyEnv: must be an environment variable name',
    );
    expect(settings).toContain('endpoints.odd.kind');
    const ids = errorOf(
      withModels([], {
        local: { kind: 'openai', baseUrl: 'http://x' },
        Upper: { kind: 'openai', baseUrl: 'http://x' },
      }),
    );
    expect(ids).toContain(
      'endpoints.local: local is the built-in echo endpoint',
    );
    expect(ids).toContain(
      'endpoints.Upper: must be lowercase letters, digits or -',
    );
  });

  it('refuses a cached price above the input price (the reservation prices all input as uncached)', () => {
    expect(
      errorOf(
        withModels([
          model('x/cached', {
            provider: 'openai',
            pricing: {
              per1kInputTokens: 1,
              per1kCachedInputTokens: 2,
              per1kOutputTokens: 1,
            },
          }),
        ]),
      ),
    ).toContain('per1kCachedInputTokens may not be above per1kInputTokens');
  });
});

describe('the providers example catalog', () => {
  it('parses, with an endpoint of every kind', () => {
    const catalog = loadCatalogFile('config/catalog.providers.example.json');
    expect(
      [...new Set(Object.values(catalog.endpoints).map((e) => e.kind))].sort(),
    ).toEqual(['azure', 'bedrock', 'gemini', 'openai']);
    expect(catalog.models.map((model) => model.endpoint)).toContain(
      'anthropic',
    );
  });
});
