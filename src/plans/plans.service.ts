import { Injectable } from '@nestjs/common';
import { PlanDto, PlanListDto } from './dto/plan.response';
import { PlansRepository, PlanWithModelsRow } from './plans.repository';

@Injectable()
export class PlansService {
  constructor(private readonly plans: PlansRepository) {}

  async listActivePlans(): Promise<PlanListDto> {
    const rows = await this.plans.findActivePlansWithModels();
    return { data: rows.map(toPlanDto) };
  }
}

function toPlanDto(row: PlanWithModelsRow): PlanDto {
  const models = row.models
    .map(({ model }) => model)
    .sort((a, b) => a.sortOrder - b.sortOrder || a.id.localeCompare(b.id));
  return {
    code: row.code,
    name: row.name,
    price: { amount: row.priceAmount, currency: row.priceCurrency, interval: row.priceInterval },
    dailyCredits: row.dailyCredits,
    checkoutAllowed: row.checkoutAllowed,
    models: models.map((model) => ({
      id: model.id,
      name: model.name,
      price: { perRequest: model.creditsPerRequest, per1kInputTokens: model.creditsPer1kInput, per1kOutputTokens: model.creditsPer1kOutput },
    })),
  };
}
