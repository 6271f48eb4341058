import { AnthropicProvider } from '../providers/anthropic.provider';
import { AzureOpenAiProvider } from '../providers/azure-openai.provider';
import { BedrockProvider } from '../providers/bedrock.provider';
import { GeminiProvider } from '../providers/gemini.provider';
import { LocalEchoProvider } from '../providers/local-echo.provider';
import { ModelProvider } from '../providers/model-provider';
import { OpenAiCompatibleProvider } from '../providers/openai-compatible.provider';
import { TransportSettings } from '../providers/sse-provider';
import { ResolvedEndpoint } from './endpoint-settings';

/** A provider adapter that holds connections: closed when the application stops. */
export interface ClosableProvider extends ModelProvider {
  close(): Promise<void>;
}

/** The adapter speaking an available endpoint's wire format, with its settings (docs/adr/0063). */
export function providerFor(
  endpoint: ResolvedEndpoint,
  transport: TransportSettings,
  echoDelayMs: number,
): ModelProvider | ClosableProvider {
  const { settings, id } = endpoint;
  switch (settings.kind) {
    case 'local':
      return new LocalEchoProvider(echoDelayMs);
    case 'openai':
      return new OpenAiCompatibleProvider(id, settings, transport);
    case 'anthropic':
      return new AnthropicProvider(id, settings, transport);
    case 'gemini':
      return new GeminiProvider(id, settings, transport);
    case 'azure': {
      const { entra } = settings;
      const clientSecret = endpoint.credentials?.clientSecret;
      return new AzureOpenAiProvider(
        id,
        {
          baseUrl: settings.baseUrl,
          apiVersion: settings.apiVersion,
          ...(entra && clientSecret
            ? {
                entra: {
                  tokenUrl: `${entra.authorityUrl.replace(/\/+$/, '')}/${encodeURIComponent(entra.tenantId)}/oauth2/v2.0/token`,
                  clientId: entra.clientId,
                  clientSecret,
                  scope: entra.scope,
                },
              }
            : {}),
        },
        transport,
      );
    }
    case 'bedrock': {
      const credentials = endpoint.credentials ?? {};
      return new BedrockProvider(
        id,
        {
          region: settings.region,
          ...(settings.baseUrl ? { endpoint: settings.baseUrl } : {}),
          credentials: {
            accessKeyId: credentials.accessKeyId ?? '',
            secretAccessKey: credentials.secretAccessKey ?? '',
            ...(credentials.sessionToken
              ? { sessionToken: credentials.sessionToken }
              : {}),
          },
        },
        transport,
      );
    }
  }
}

export function isClosable(
  provider: ModelProvider,
): provider is ClosableProvider {
  return typeof (provider as Partial<ClosableProvider>).close === 'function';
}
