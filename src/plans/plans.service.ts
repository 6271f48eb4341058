import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { CatalogCache, CatalogSnapshot } from '../catalog/catalog-cache';
import { PlanListDto } from './dto/plan.response';

/** GET /v1/plans as sent: the JSON text and its entity tag, computed once per catalog version. */
export interface SerializedPlans {
  body: string;
  etag: string;
}

@Injectable()
export class PlansService {
  private serialized: (SerializedPlans & { version: number }) | undefined;

  constructor(private readonly catalog: CatalogCache) {}

  async listActivePlans(): Promise<SerializedPlans> {
    const snapshot = await this.catalog.current();
    if (this.serialized?.version !== snapshot.version) {
      const body = JSON.stringify(toPlanList(snapshot));
      this.serialized = {
        version: snapshot.version,
        body,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      };
    }
    return this.serialized;
  }
}

function toPlanList(snapshot: CatalogSnapshot): PlanListDto {
  const models = [...snapshot.models.values()];
  return {
    data: snapshot.plans.map((plan) => {
      const included = new Set(plan.models.map((link) => link.modelId));
      return {
        id: plan.code,
        code: plan.code,
        name: plan.name,
        price: {
          amount: plan.priceAmount,
          currency: plan.priceCurrency,
          interval: plan.priceInterval,
        },
        dailyCredits: plan.dailyCredits,
        checkoutAllowed: plan.checkoutAllowed,
        models: models
          .filter((model) => included.has(model.id))
          .map((model) => ({
            id: model.id,
            name: model.name,
            price: {
              perRequest: model.creditsPerRequest,
              per1kInputTokens: model.creditsPer1kInput,
              per1kOutputTokens: model.creditsPer1kOutput,
            },
          })),
      };
    }),
  };
}
