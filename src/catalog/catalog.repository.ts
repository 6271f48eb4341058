import { Injectable } from '@nestjs/common';
import { Db, PrismaService } from '../infra/prisma/prisma.service';
import { CatalogModel, CatalogPlan, EndpointKind } from './catalog.schema';

/** Arbitrary constant: the advisory lock that serialises catalog syncs of instances starting together. */
const CATALOG_SYNC_LOCK = 7_240_001;

@Injectable()
export class CatalogRepository {
  constructor(private readonly prisma: PrismaService) {}

  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { timeout: 30_000 });
  }

  async lockCatalogSync(db: Db): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(${CATALOG_SYNC_LOCK}::bigint)`;
  }

  /** `endpoint` as the catalog resolved it: the model's endpoint id and that endpoint's kind. */
  async upsertModel(
    db: Db,
    model: CatalogModel,
    endpoint: { id: string; kind: EndpointKind },
    sortOrder: number,
  ): Promise<void> {
    const fields = {
      name: model.name,
      provider: endpoint.kind,
      endpoint: endpoint.id,
      upstreamModel: model.upstreamModel,
      creditsPerRequest: model.pricing.perRequest,
      creditsPer1kInput: model.pricing.per1kInputTokens,
      creditsPer1kOutput: model.pricing.per1kOutputTokens,
      creditsPer1kCachedInput: model.pricing.per1kCachedInputTokens ?? null,
      fallbacks: model.fallbacks,
      maxOutputTokens: model.maxOutputTokens,
      contextWindowTokens: model.contextWindow,
      sortOrder,
      active: true,
    };
    await db.model.upsert({
      where: { id: model.id },
      create: { id: model.id, ...fields },
      update: fields,
      select: { id: true },
    });
  }

  async upsertPlan(
    db: Db,
    plan: CatalogPlan,
    sortOrder: number,
  ): Promise<void> {
    const fields = {
      name: plan.name,
      priceAmount: plan.price.amount,
      priceCurrency: plan.price.currency,
      priceInterval: plan.price.interval,
      dailyCredits: plan.dailyCredits,
      storageQuotaBytes: BigInt(plan.storageQuotaBytes),
      checkoutAllowed: plan.checkoutAllowed,
      sortOrder,
      active: true,
    };
    await db.plan.upsert({
      where: { code: plan.code },
      create: { code: plan.code, ...fields },
      update: fields,
      select: { code: true },
    });
  }

  async replacePlanModels(
    db: Db,
    planCode: string,
    modelIds: string[],
  ): Promise<void> {
    await db.planModel.deleteMany({
      where: { planCode, modelId: { notIn: modelIds } },
    });
    await db.planModel.createMany({
      data: modelIds.map((modelId) => ({ planCode, modelId })),
      skipDuplicates: true,
    });
  }

  async deactivateModelsNotIn(db: Db, ids: string[]): Promise<number> {
    const result = await db.model.updateMany({
      where: { id: { notIn: ids }, active: true },
      data: { active: false },
    });
    return result.count;
  }

  async deactivatePlansNotIn(db: Db, codes: string[]): Promise<number> {
    const result = await db.plan.updateMany({
      where: { code: { notIn: codes }, active: true },
      data: { active: false },
    });
    return result.count;
  }

  /** Active models with their prices and the active plans that include them (what chat needs to plan a run). */
  findActiveModels() {
    return this.prisma.model.findMany({
      where: { active: true },
      orderBy: [{ sortOrder: 'asc' }, { id: 'asc' }],
      select: {
        id: true,
        name: true,
        provider: true,
        endpoint: true,
        upstreamModel: true,
        creditsPerRequest: true,
        creditsPer1kInput: true,
        creditsPer1kOutput: true,
        creditsPer1kCachedInput: true,
        fallbacks: true,
        maxOutputTokens: true,
        contextWindowTokens: true,
        plans: {
          where: { plan: { active: true } },
          select: { planCode: true },
        },
      },
    });
  }

  /** Active plans in catalog order with the ids of their models (GET /v1/plans). */
  findActivePlans() {
    return this.prisma.plan.findMany({
      where: { active: true },
      orderBy: [{ sortOrder: 'asc' }, { code: 'asc' }],
      select: {
        code: true,
        name: true,
        priceAmount: true,
        priceCurrency: true,
        priceInterval: true,
        dailyCredits: true,
        checkoutAllowed: true,
        models: { select: { modelId: true } },
      },
    });
  }
}
