import {
  EntraSettings,
  EntraTokenCache,
  EntraTokenOptions,
} from './entra-token';
import {
  GenerationRequest,
  GenerationSink,
  ProviderError,
} from './model-provider';
import {
  openAiHeaders,
  openAiRequestBody,
  OpenAiStreamDecoder,
} from './openai-compatible.provider';
import {
  SseModelProvider,
  StreamDecoder,
  TransportSettings,
  UpstreamCall,
} from './sse-provider';

export type { EntraSettings } from './entra-token';

export interface AzureOpenAiSettings {
  /** `https://<resource>.openai.azure.com/openai` */
  baseUrl: string;
  /** The data-plane API version Azure requires on every call (`2024-10-21`). */
  apiVersion: string;
  /** Authenticate with a Microsoft Entra app (client credentials) instead of the request's API key. */
  entra?: EntraSettings;
}

/**
 * Azure OpenAI's chat completions: `POST <baseUrl>/deployments/<deployment>/chat/completions
 * ?api-version=<version>`, the deployment being the request's `upstreamModel`. The body and the stream are
 * OpenAI's (Azure ignores `model`; its content filter's `finish_reason: content_filter` fails the answer,
 * see OpenAiStreamDecoder). Authenticated by the request's key in `api-key`, or, with `entra`, by an Entra
 * bearer token shared by every call of this endpoint (the key pool then plays no part).
 */
export class AzureOpenAiProvider extends SseModelProvider {
  private readonly query: string;
  private readonly entra: EntraTokenCache | undefined;

  /** `entraOptions`: the token cache's clock and fetch, for tests. */
  constructor(
    name: string,
    settings: AzureOpenAiSettings,
    transport: TransportSettings,
    entraOptions?: EntraTokenOptions,
  ) {
    super(name, { baseUrl: settings.baseUrl }, transport);
    this.query = `?api-version=${encodeURIComponent(settings.apiVersion)}`;
    this.entra =
      settings.entra && new EntraTokenCache(name, settings.entra, entraOptions);
  }

  /** A 401 with an Entra token drops it, so the next call fetches a new one (revoked, roles changed). */
  override async pump(
    request: GenerationRequest,
    sink: GenerationSink,
  ): Promise<void> {
    try {
      await super.pump(request, sink);
    } catch (error) {
      if (error instanceof ProviderError && error.failure.status === 401)
        this.entra?.invalidate();
      throw error;
    }
  }

  protected async call(request: GenerationRequest): Promise<UpstreamCall> {
    return {
      path: `/deployments/${encodeURIComponent(request.upstreamModel)}/chat/completions${this.query}`,
      headers: openAiHeaders(await this.auth(request)),
      body: openAiRequestBody(request),
    };
  }

  protected decoder(): StreamDecoder {
    return new OpenAiStreamDecoder();
  }

  private async auth(
    request: GenerationRequest,
  ): Promise<Record<string, string>> {
    if (this.entra)
      return {
        authorization: `Bearer ${await this.entra.token(request.signal)}`,
      };
    return request.apiKey ? { 'api-key': request.apiKey } : {};
  }
}
