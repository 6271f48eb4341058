import {
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Catalog } from '../catalog/catalog.schema';
import { CATALOG } from '../catalog/catalog.token';
import { AppError } from '../common/errors/app-error';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import {
  EndpointKey,
  resolveEndpoints,
  ResolvedEndpoint,
} from './endpoints/endpoint-settings';
import { isClosable, providerFor } from './endpoints/provider-factory';
import { ModelProvider } from './providers/model-provider';
import { TransportSettings } from './providers/sse-provider';
import { KeyCooldowns } from './routing/key-cooldowns';

/** Longest wait for a provider's TCP/TLS connection. */
const CONNECT_TIMEOUT_MS = 10_000;
/** undici's own response timeouts sit this far behind the silence limit the chat enforces itself. */
const RESPONSE_TIMEOUT_MARGIN_MS = 10_000;

/** An endpoint as admins see it: no secret in it. */
export interface EndpointDescription {
  id: string;
  kind: string;
  keys: { label: string; fingerprint: string }[];
  /** Why this instance cannot use it; absent when it can. */
  unavailable?: string;
}

/** An endpoint this instance can call: its adapter and its key pool. */
export interface Endpoint {
  id: string;
  kind: ResolvedEndpoint['kind'];
  provider: ModelProvider;
  keys: readonly EndpointKey[];
}

/**
 * The catalog's endpoints (docs/adr/0063-providers-and-routing.md), resolved once at start from the
 * catalog file and the environment: each available one with its adapter and key pool. Keys are handed
 * out in turn, skipping those resting after a 429 or a refusal (KeyCooldowns, shared by all instances).
 */
@Injectable()
export class ProviderEndpoints
  implements OnApplicationBootstrap, OnModuleDestroy
{
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly resolved: ResolvedEndpoint[];
  /** Where each endpoint's next key search starts (round robin). */
  private readonly turns = new Map<string, number>();

  constructor(
    @Inject(CATALOG) catalog: Catalog,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly cooldowns: KeyCooldowns,
    private readonly log: AppLogger,
  ) {
    const transport: TransportSettings = {
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      responseTimeoutMs:
        config.chat.providerTimeoutMs + RESPONSE_TIMEOUT_MARGIN_MS,
    };
    this.resolved = resolveEndpoints(
      catalog,
      config.providers.environment,
      config.secrets.session,
    );
    for (const endpoint of this.resolved) {
      if (endpoint.unavailable) continue;
      this.endpoints.set(endpoint.id, {
        id: endpoint.id,
        kind: endpoint.kind,
        provider: providerFor(
          endpoint,
          transport,
          config.providers.echoDelayMs,
        ),
        keys: endpoint.keys,
      });
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const endpoint of this.resolved)
      if (endpoint.unavailable)
        this.log.info(
          { endpoint: endpoint.id, reason: endpoint.unavailable },
          'model endpoint not configured: its models answer 503 provider_not_configured',
        );
    await this.cooldowns.listen(
      [...this.endpoints.values()].flatMap((endpoint) =>
        endpoint.keys.map((key) => ({
          endpoint: endpoint.id,
          fingerprint: key.fingerprint,
        })),
      ),
    );
  }

  /** The endpoint, if this instance can call it. */
  find(id: string): Endpoint | undefined {
    return this.endpoints.get(id);
  }

  /** The endpoint, or 503 provider_not_configured (nothing is claimed or billed before this). */
  configured(id: string): Endpoint {
    const endpoint = this.endpoints.get(id);
    if (!endpoint)
      throw new AppError(
        'provider_not_configured',
        `The ${id} provider is not configured on this server.`,
      );
    return endpoint;
  }

  /** Every endpoint of the catalog, with why it cannot be used when it cannot (admins' view). */
  describe(): EndpointDescription[] {
    return this.resolved.map((endpoint) => ({
      id: endpoint.id,
      kind: endpoint.kind,
      // Never the secrets: where each key comes from, and its fingerprint.
      keys: endpoint.keys.map(({ label, fingerprint }) => ({
        label,
        fingerprint,
      })),
      ...(endpoint.unavailable ? { unavailable: endpoint.unavailable } : {}),
    }));
  }

  /**
   * The endpoint's next key not resting for `model` (round robin from where the last search ended, so
   * calls spread over the pool), or undefined when every key rests.
   */
  nextKey(
    endpoint: Endpoint,
    model?: string,
    now = Date.now(),
  ): EndpointKey | undefined {
    const index = this.usableIndex(endpoint, model, now);
    if (index === undefined) return undefined;
    this.turns.set(endpoint.id, (index + 1) % endpoint.keys.length);
    return endpoint.keys[index];
  }

  /** Whether a key of the endpoint may be used for `model` now (nothing is taken). */
  hasKey(endpoint: Endpoint, model?: string, now = Date.now()): boolean {
    return this.usableIndex(endpoint, model, now) !== undefined;
  }

  /**
   * Rests a key that answered 429 or refused it, for `ms`, on every instance: for `model` only when given
   * (most providers limit each model apart), else for all the endpoint's models.
   */
  coolDown(
    endpoint: Endpoint,
    key: EndpointKey,
    ms: number,
    model?: string,
  ): void {
    // An endpoint without keys has nothing to rest: its pool is the endpoint itself.
    if (key.fingerprint === 'none') return;
    this.cooldowns.coolDown(endpoint.id, key.fingerprint, ms, model);
  }

  private usableIndex(
    endpoint: Endpoint,
    model: string | undefined,
    now: number,
  ): number | undefined {
    const { keys } = endpoint;
    const start = this.turns.get(endpoint.id) ?? 0;
    for (let offset = 0; offset < keys.length; offset += 1) {
      const index = (start + offset) % keys.length;
      if (
        !this.cooldowns.coolingUntil(
          endpoint.id,
          keys[index].fingerprint,
          model,
          now,
        )
      )
        return index;
    }
    return undefined;
  }

  /**
   * Closes the upstream connections. Modules are destroyed dependents first, so ChatPipelineService has
   * already waited for the generations it waits for; upstream calls still running are cut, not awaited.
   */
  async onModuleDestroy(): Promise<void> {
    await Promise.all(
      [...this.endpoints.values()].flatMap(({ provider }) =>
        isClosable(provider) ? [provider.close()] : [],
      ),
    );
  }
}
