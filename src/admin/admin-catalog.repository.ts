import { Injectable } from '@nestjs/common';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

@Injectable()
export class AdminCatalogRepository {
  constructor(private readonly prisma: PrismaService) {}

  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: 15_000 });
  }

  /** Every plan as synced from the catalog, inactive ones included, with its models and how many users it has. */
  findAllPlans() {
    return this.prisma.plan.findMany({
      orderBy: [{ sortOrder: 'asc' }, { code: 'asc' }],
      select: {
        code: true,
        name: true,
        priceAmount: true,
        priceCurrency: true,
        priceInterval: true,
        dailyCredits: true,
        storageQuotaBytes: true,
        checkoutAllowed: true,
        active: true,
        models: { orderBy: { modelId: 'asc' }, select: { modelId: true } },
        _count: { select: { users: true } },
      },
    });
  }

  findAllModels() {
    return this.prisma.model.findMany({
      orderBy: [{ sortOrder: 'asc' }, { id: 'asc' }],
      select: {
        id: true,
        name: true,
        provider: true,
        upstreamModel: true,
        creditsPerRequest: true,
        creditsPer1kInput: true,
        creditsPer1kOutput: true,
        maxOutputTokens: true,
        contextWindowTokens: true,
        active: true,
      },
    });
  }
}
