import { Injectable } from '@nestjs/common';
import { CatalogCache } from '../catalog/catalog-cache';
import { ProviderEndpoints } from '../models/provider-endpoints';
import {
  EndpointHealth,
  HEALTH_WINDOW_MINUTES,
} from '../models/routing/endpoint-health';
import { KeyCooldowns } from '../models/routing/key-cooldowns';
import {
  AdminProviderHealthDto,
  AdminProviderListDto,
} from './dto/admin-providers.response';

/**
 * The catalog's endpoints as this instance resolved them (docs/adr/0063-providers-and-routing.md): whether
 * each can be used, the active models reached through it, its keys (labels and fingerprints only) with
 * their cooldowns, and its recent health.
 */
@Injectable()
export class AdminProvidersService {
  constructor(
    private readonly endpoints: ProviderEndpoints,
    private readonly cooldowns: KeyCooldowns,
    private readonly health: EndpointHealth,
    private readonly catalog: CatalogCache,
  ) {}

  async list(): Promise<AdminProviderListDto> {
    const described = this.endpoints.describe();
    const [snapshot, reports] = await Promise.all([
      this.catalog.current(),
      this.health.report(described.map((endpoint) => endpoint.id)),
    ]);
    const resting = new Map(
      this.cooldowns
        .all()
        .map((cooldown) => [
          restingKey(cooldown.endpoint, cooldown.fingerprint),
          cooldown.until,
        ]),
    );
    const models = [...snapshot.models.values()];
    return {
      data: described.map((endpoint) => {
        const report = reports.get(endpoint.id);
        const health: AdminProviderHealthDto = {
          windowMinutes: HEALTH_WINDOW_MINUTES,
          calls: report?.calls ?? 0,
          failures: report?.failures ?? 0,
          cooldowns: report?.cooldowns ?? 0,
          firstTokenMs: report?.firstTokenMs ?? null,
          lastFailure: report?.lastFailure
            ? { at: report.lastFailure.at, reason: report.lastFailure.reason }
            : null,
        };
        const until = (fingerprint: string) =>
          resting.get(restingKey(endpoint.id, fingerprint));
        return {
          id: endpoint.id,
          kind: endpoint.kind,
          configured: endpoint.unavailable === undefined,
          unavailableReason: endpoint.unavailable ?? null,
          models: models
            .filter((model) => model.endpoint === endpoint.id)
            .map((model) => model.id),
          keys: endpoint.keys.map(({ label, fingerprint }) => {
            const restingUntil = until(fingerprint);
            return {
              label,
              fingerprint,
              coolingDownUntil:
                restingUntil === undefined
                  ? null
                  : new Date(restingUntil).toISOString(),
            };
          }),
          health,
        };
      }),
    };
  }
}

function restingKey(endpoint: string, fingerprint: string): string {
  return `${endpoint}\u0000${fingerprint}`;
}
