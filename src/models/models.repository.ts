import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infra/prisma/prisma.service';

@Injectable()
export class ModelsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** An active catalog model with its price, and whether `planCode` includes it (an empty `plans` means no). */
  findActiveWithPlanAccess(modelId: string, planCode: string) {
    return this.prisma.model.findFirst({
      where: { id: modelId, active: true },
      select: {
        id: true,
        provider: true,
        upstreamModel: true,
        creditsPerRequest: true,
        creditsPer1kInput: true,
        creditsPer1kOutput: true,
        maxOutputTokens: true,
        plans: { where: { planCode }, select: { planCode: true } },
      },
    });
  }
}
