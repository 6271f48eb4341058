import { Inject, Injectable } from '@nestjs/common';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AiSdkProvider } from './providers/ai-sdk.provider';
import { LocalEchoProvider } from './providers/local-echo.provider';
import { ModelProvider } from './providers/model-provider';

/** The provider adapters by catalog `provider` name, built once from the configuration. */
@Injectable()
export class ModelProviders {
  private readonly providers: Map<string, ModelProvider>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const { openai, anthropic } = config.providers;
    const openaiCompatible = createOpenAICompatible({ name: 'openai', baseURL: openai.baseUrl, apiKey: openai.apiKey ?? 'unset', includeUsage: true });
    const anthropicClient = createAnthropic({ baseURL: anthropic.baseUrl, apiKey: anthropic.apiKey ?? 'unset' });
    this.providers = new Map<string, ModelProvider>([
      ['local', new LocalEchoProvider(config.providers.echoDelayMs)],
      ['openai', new AiSdkProvider('openai', Boolean(openai.apiKey), (model) => openaiCompatible.chatModel(model))],
      ['anthropic', new AiSdkProvider('anthropic', Boolean(anthropic.apiKey), (model) => anthropicClient(model))],
    ]);
  }

  /** The configured adapter of a catalog provider, or 503 provider_not_configured. */
  configured(name: string): ModelProvider {
    const provider = this.providers.get(name);
    if (!provider || !provider.isConfigured()) {
      throw new AppError('provider_not_configured', `The ${name} provider is not configured on this server.`);
    }
    return provider;
  }
}
