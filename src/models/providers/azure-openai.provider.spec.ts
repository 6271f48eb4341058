import {
  AzureOpenAiProvider,
  AzureOpenAiSettings,
} from './azure-openai.provider';
import { EntraTokenOptions, TokenFetch } from './entra-token';
import { GenerationRequest } from './model-provider';
import { openAiRequestBody } from './openai-compatible.provider';
import { TransportSettings, UpstreamCall } from './sse-provider';

const transport: TransportSettings = {
  connectTimeoutMs: 1_000,
  responseTimeoutMs: 1_000,
};
const KEY = 'azure-key-0123456789abcdef';

/** The adapter with its call (what it would send) in reach. */
class Probe extends AzureOpenAiProvider {
  constructor(settings: AzureOpenAiSettings, entraOptions?: EntraTokenOptions) {
    super('azure', settings, transport, entraOptions);
  }

  probe(request: GenerationRequest): Promise<UpstreamCall> {
    return this.call(request);
  }
}

const request = (
  extra: Partial<GenerationRequest> = {},
): GenerationRequest => ({
  upstreamModel: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
  ],
  maxOutputTokens: 64,
  ...extra,
});

describe('AzureOpenAiProvider', () => {
  const providers: AzureOpenAiProvider[] = [];
  const provider = (
    settings: AzureOpenAiSettings,
    options?: EntraTokenOptions,
  ) => {
    const created = new Probe(settings, options);
    providers.push(created);
    return created;
  };
  afterAll(() => Promise.all(providers.map((created) => created.close())));

  const settings = {
    baseUrl: 'https://res-1.openai.azure.com/openai',
    apiVersion: '2024-10-21',
  };

  it('posts to the deployment with the api-version, the request’s key in api-key, and the OpenAI body', async () => {
    const call = await provider(settings).probe(request({ apiKey: KEY }));
    expect(call).toEqual({
      path: '/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21',
      headers: {
        'api-key': KEY,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: openAiRequestBody(request({ apiKey: KEY })),
    });
  });

  it('encodes the deployment name and the version into the path, and sends no auth header without a key', async () => {
    const call = await provider({
      ...settings,
      apiVersion: '2025-01-01-preview&x=1',
    }).probe(request({ upstreamModel: 'team a/gpt?4' }));
    expect(call.path).toBe(
      '/deployments/team%20a%2Fgpt%3F4/chat/completions?api-version=2025-01-01-preview%26x%3D1',
    );
    expect(call.headers).toEqual({
      'content-type': 'application/json',
      accept: 'text/event-stream',
    });
  });

  it('with Entra: a bearer token from the client-credentials grant, shared by the calls, instead of the key', async () => {
    const forms: string[] = [];
    const fetch: TokenFetch = (_url, init) => {
      forms.push(init.body);
      return Promise.resolve({
        status: 200,
        headers: { get: () => null },
        text: () =>
          Promise.resolve(
            JSON.stringify({
              token_type: 'Bearer',
              expires_in: 3600,
              access_token: `tok-${forms.length}`,
            }),
          ),
      });
    };
    const azure = provider(
      {
        ...settings,
        entra: {
          tokenUrl: 'https://login.example.test/t/oauth2/v2.0/token',
          clientId: 'client-1',
          clientSecret: 'secret-1',
          scope: 'https://cognitiveservices.azure.com/.default',
        },
      },
      { fetch },
    );
    const calls = await Promise.all([
      azure.probe(request({ apiKey: KEY })),
      azure.probe(request()),
    ]);
    for (const call of calls)
      expect(call.headers).toEqual({
        authorization: 'Bearer tok-1',
        'content-type': 'application/json',
        accept: 'text/event-stream',
      });
    expect(forms).toHaveLength(1);
  });
});
