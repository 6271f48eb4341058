import { AzureOpenAiProvider } from '../src/models/providers/azure-openai.provider';
import { EntraSettings } from '../src/models/providers/entra-token';
import {
  ChatMessage,
  GenerationEvent,
  ProviderError,
} from '../src/models/providers/model-provider';
import { TransportSettings } from '../src/models/providers/sse-provider';
import {
  AZURE_KEY,
  ENTRA_CLIENT_ID,
  ENTRA_CLIENT_SECRET,
  ENTRA_SCOPE,
  FakeAzure,
} from './support/fake-azure';

/** The Azure OpenAI adapter on the wire, against a loopback Azure resource and Entra token endpoint. */

const PROMPT = 'my very private question 5d2c';
const messages: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: PROMPT },
];
const transport: TransportSettings = {
  connectTimeoutMs: 5_000,
  responseTimeoutMs: 30_000,
};
const API_VERSION = '2024-10-21';

/** Every event until the end, or the error that ended the stream with the events before it. */
async function run(
  provider: AzureOpenAiProvider,
  options: { apiKey?: string; deployment?: string } = {},
): Promise<{ events: GenerationEvent[]; error?: unknown }> {
  const events: GenerationEvent[] = [];
  try {
    for await (const event of provider.stream({
      upstreamModel: options.deployment ?? 'gpt-4o-mini',
      messages,
      maxOutputTokens: 50,
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    }))
      events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

/** The ProviderError, after checking that neither its message nor its stack carries a secret or the prompt. */
function providerError(error: unknown): ProviderError {
  expect(error).toBeInstanceOf(ProviderError);
  const text = `${(error as Error).message} ${(error as Error).stack ?? ''}`;
  for (const secret of [AZURE_KEY, ENTRA_CLIENT_SECRET, PROMPT, 'Be brief.'])
    expect(text).not.toContain(secret);
  return error as ProviderError;
}

describe('Azure OpenAI adapter on the wire', () => {
  let fake: FakeAzure;
  const providers: AzureOpenAiProvider[] = [];
  const azure = (
    settings: { apiVersion?: string; entra?: EntraSettings } = {},
  ): AzureOpenAiProvider => {
    const provider = new AzureOpenAiProvider(
      'azure',
      {
        baseUrl: fake.resourceUrl,
        apiVersion: settings.apiVersion ?? API_VERSION,
        ...(settings.entra ? { entra: settings.entra } : {}),
      },
      transport,
    );
    providers.push(provider);
    return provider;
  };
  const entra = (clientSecret = ENTRA_CLIENT_SECRET): EntraSettings => ({
    tokenUrl: fake.tokenUrl,
    clientId: ENTRA_CLIENT_ID,
    clientSecret,
    scope: ENTRA_SCOPE,
  });

  beforeAll(async () => {
    fake = await new FakeAzure().start();
  });
  afterAll(async () => {
    await Promise.all(providers.map((provider) => provider.close()));
    await fake.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Hello', ' there'] };
    fake.calls.length = 0;
    fake.tokenRequests = 0;
    fake.tokenLifetimeS = 3600;
  });

  it('streams the text and the usage with its cached tokens, calling the deployment with api-version and api-key', async () => {
    fake.mode = { kind: 'ok', words: ['Hello', ' there'], cachedTokens: 5 };
    const { events, error } = await run(azure(), { apiKey: AZURE_KEY });
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' there' },
      { type: 'usage', inputTokens: 7, outputTokens: 2, cachedInputTokens: 5 },
    ]);
    expect(fake.calls).toEqual([
      {
        deployment: 'gpt-4o-mini',
        apiVersion: API_VERSION,
        apiKey: AZURE_KEY,
        authorization: undefined,
        body: {
          model: 'gpt-4o-mini',
          messages,
          stream: true,
          stream_options: { include_usage: true },
          max_tokens: 50,
        },
      },
    ]);
  });

  it('with Entra: one token for concurrent and later calls, a new one once it nears expiry', async () => {
    // A 4 s token is kept for half its lifetime (EntraTokenCache), so the test waits 2 s, not 5 minutes.
    fake.tokenLifetimeS = 4;
    const provider = azure({ entra: entra() });
    const first = await Promise.all([
      run(provider),
      run(provider, { apiKey: 'a-pool-key-that-plays-no-part' }),
      run(provider),
    ]);
    const later = await run(provider);
    for (const { events, error } of [...first, later]) {
      expect(error).toBeUndefined();
      expect(events.at(-1)).toEqual({
        type: 'usage',
        inputTokens: 7,
        outputTokens: 2,
        cachedInputTokens: 0,
      });
    }
    expect(fake.tokenRequests).toBe(1);
    expect(fake.calls.map((call) => [call.authorization, call.apiKey])).toEqual(
      Array.from({ length: 4 }, () => ['Bearer entra-token-1', undefined]),
    );

    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await run(provider)).error).toBeUndefined();
    expect(fake.tokenRequests).toBe(2);
    expect(fake.calls.at(-1)?.authorization).toBe('Bearer entra-token-2');
  });

  it('with Entra: a token Azure refuses fails that call (401) and is dropped, so the next call gets a new one', async () => {
    const provider = azure({ entra: entra() });
    expect((await run(provider)).error).toBeUndefined();
    fake.revokeTokens();
    const { error } = await run(provider);
    expect(providerError(error).failure).toEqual({
      kind: 'http',
      status: 401,
      retryAfterMs: undefined,
    });
    expect((await run(provider)).error).toBeUndefined();
    expect(fake.tokenRequests).toBe(2);
    expect(fake.calls.map((call) => call.authorization)).toEqual([
      'Bearer entra-token-1',
      'Bearer entra-token-1',
      'Bearer entra-token-2',
    ]);
  });

  it('with Entra refusing the client secret: an http ProviderError with Entra’s reason, never the secret, and no Azure call', async () => {
    const { events, error } = await run(
      azure({ entra: entra(`${ENTRA_CLIENT_SECRET}-old`) }),
    );
    expect(events).toEqual([]);
    const failure = providerError(error);
    expect(failure.message).toBe(
      `azure: Entra token request failed: HTTP 401: invalid_client: AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${ENTRA_CLIENT_ID}'.`,
    );
    expect(failure.failure).toEqual({
      kind: 'http',
      status: 401,
      retryAfterMs: undefined,
    });
    expect(fake.tokenRequests).toBe(1);
    expect(fake.calls).toEqual([]);
  });

  it('a wrong key: HTTP 401 with Azure’s message, the key in neither message nor stack', async () => {
    const { events, error } = await run(azure(), {
      apiKey: `${AZURE_KEY}-revoked`,
    });
    expect(events).toEqual([]);
    const failure = providerError(error);
    expect(failure.message).toBe(
      'azure: HTTP 401: Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
    );
    expect(failure.failure).toEqual({
      kind: 'http',
      status: 401,
      retryAfterMs: undefined,
    });
  });

  it('throttled: HTTP 429 with the Retry-After the router waits for', async () => {
    fake.mode = {
      kind: 'rate-limited',
      retryAfter: '3',
      retryAfterMs: '3000',
    };
    const { error } = await run(azure(), { apiKey: AZURE_KEY });
    const failure = providerError(error);
    expect(failure.failure).toEqual({
      kind: 'http',
      status: 429,
      retryAfterMs: 3000,
    });
    expect(failure.message).toBe(
      `azure: HTTP 429: Requests to the ChatCompletions_Create Operation under Azure OpenAI API version ${API_VERSION} have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 3 seconds.`,
    );
  });

  it('the content filter stopping the answer: the text that passed, then a refusal naming the category (not retried)', async () => {
    fake.mode = { kind: 'filtered', words: ['Once upon'] };
    const { events, error } = await run(azure(), { apiKey: AZURE_KEY });
    expect(events).toEqual([{ type: 'text', text: 'Once upon' }]);
    const failure = providerError(error);
    expect(failure.message).toBe(
      'azure: stopped by the content filter (violence: medium)',
    );
    expect(failure.failure).toEqual({ kind: 'refused' });
  });

  it('Azure’s own refusals pass through: no api-version (400), an unknown deployment (404)', async () => {
    const noVersion = await run(azure({ apiVersion: '' }), {
      apiKey: AZURE_KEY,
    });
    expect(providerError(noVersion.error).message).toBe(
      'azure: HTTP 400: The api-version query parameter (?api-version=) is required for all requests.',
    );
    const unknown = await run(azure(), {
      apiKey: AZURE_KEY,
      deployment: 'gpt-5-nowhere',
    });
    expect(providerError(unknown.error).failure).toEqual({
      kind: 'http',
      status: 404,
      retryAfterMs: undefined,
    });
    expect(fake.calls.map((call) => call.deployment)).toEqual([
      'gpt-4o-mini',
      'gpt-5-nowhere',
    ]);
  });
});
