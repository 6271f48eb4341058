import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infra/prisma/prisma.service';

const planWithModels = {
  code: true,
  name: true,
  priceAmount: true,
  priceCurrency: true,
  priceInterval: true,
  dailyCredits: true,
  checkoutAllowed: true,
  models: {
    where: { model: { active: true } },
    select: {
      model: {
        select: { id: true, name: true, creditsPerRequest: true, creditsPer1kInput: true, creditsPer1kOutput: true, sortOrder: true },
      },
    },
  },
} as const;

@Injectable()
export class PlansRepository {
  constructor(private readonly prisma: PrismaService) {}

  findActivePlansWithModels() {
    return this.prisma.plan.findMany({ where: { active: true }, orderBy: [{ sortOrder: 'asc' }, { code: 'asc' }], select: planWithModels });
  }
}

export type PlanWithModelsRow = Awaited<ReturnType<PlansRepository['findActivePlansWithModels']>>[number];
