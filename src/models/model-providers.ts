import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AnthropicProvider } from './providers/anthropic.provider';
import { LocalEchoProvider } from './providers/local-echo.provider';
import { ModelProvider } from './providers/model-provider';
import { OpenAiCompatibleProvider } from './providers/openai-compatible.provider';
import { SseModelProvider, TransportSettings } from './providers/sse-provider';

/** Longest wait for a provider's TCP/TLS connection. */
const CONNECT_TIMEOUT_MS = 10_000;
/** undici's own response timeouts sit this far behind the silence limit the chat enforces itself. */
const RESPONSE_TIMEOUT_MARGIN_MS = 10_000;

/** The provider adapters by catalog `provider` name, built once from the configuration. */
@Injectable()
export class ModelProviders implements OnModuleDestroy {
  private readonly providers: Map<string, ModelProvider>;
  private readonly upstreams: SseModelProvider[];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const { openai, anthropic } = config.providers;
    const transport: TransportSettings = {
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      responseTimeoutMs:
        config.chat.providerTimeoutMs + RESPONSE_TIMEOUT_MARGIN_MS,
    };
    this.upstreams = [
      new OpenAiCompatibleProvider('openai', openai, transport),
      new AnthropicProvider('anthropic', anthropic, transport),
    ];
    this.providers = new Map<string, ModelProvider>([
      ['local', new LocalEchoProvider(config.providers.echoDelayMs)],
      ...this.upstreams.map((provider): [string, ModelProvider] => [
        provider.name,
        provider,
      ]),
    ]);
  }

  /** The configured adapter of a catalog provider, or 503 provider_not_configured. */
  configured(name: string): ModelProvider {
    const provider = this.providers.get(name);
    if (!provider || !provider.isConfigured()) {
      throw new AppError(
        'provider_not_configured',
        `The ${name} provider is not configured on this server.`,
      );
    }
    return provider;
  }

  /**
   * Closes the upstream connections. Modules are destroyed dependents first, so ChatPipelineService has
   * already waited for the generations it waits for; upstream calls still running are cut, not awaited.
   */
  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.upstreams.map((provider) => provider.close()));
  }
}
