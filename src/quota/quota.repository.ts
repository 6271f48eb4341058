import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infra/prisma/prisma.service';

@Injectable()
export class QuotaRepository {
  constructor(private readonly prisma: PrismaService) {}

  findPlanOfUser(userId: string) {
    return this.prisma.user.findUnique({
      where: { id: userId },
      select: {
        plan: { select: { code: true, name: true, dailyCredits: true } },
      },
    });
  }

  findUsageOfDay(userId: string, day: Date) {
    return this.prisma.dailyUsage.findUnique({
      where: { userId_day: { userId, day } },
      select: { used: true, reserved: true },
    });
  }

  /** Credits granted by admins that cover this day. */
  async sumGrantsForDay(userId: string, day: Date): Promise<number> {
    const result = await this.prisma.creditGrant.aggregate({
      where: { userId, firstDay: { lte: day }, lastDay: { gte: day } },
      _sum: { credits: true },
    });
    return result._sum.credits ?? 0;
  }
}
