import { Injectable } from '@nestjs/common';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

@Injectable()
export class QuotaRepository {
  constructor(private readonly prisma: PrismaService) {}

  findPlanOfUser(userId: string) {
    return this.prisma.user.findUnique({ where: { id: userId }, select: { plan: { select: { code: true, name: true, dailyCredits: true } } } });
  }

  findUsageOfDay(userId: string, day: Date) {
    return this.prisma.dailyUsage.findUnique({ where: { userId_day: { userId, day } }, select: { used: true, reserved: true } });
  }

  /** Credits granted by admins that cover this day. */
  async sumGrantsForDay(userId: string, day: Date): Promise<number> {
    const result = await this.prisma.creditGrant.aggregate({ where: { userId, firstDay: { lte: day }, lastDay: { gte: day } }, _sum: { credits: true } });
    return result._sum.credits ?? 0;
  }

  /**
   * Holds `credits` of the user's day if they fit: one conditional UPDATE whose limit is the plan's daily
   * credits plus the grants covering the day. Concurrent reservations queue on the row lock and each sees
   * the previous one's result, so they can never together exceed the limit. False when it does not fit.
   */
  async reserve(db: Db, userId: string, day: Date, credits: number): Promise<boolean> {
    const isoDay = day.toISOString().slice(0, 10);
    await db.$executeRaw`INSERT INTO "DailyUsage" ("userId", day) VALUES (${userId}::uuid, ${isoDay}::date) ON CONFLICT DO NOTHING`;
    const updated = await db.$executeRaw`
      UPDATE "DailyUsage" d SET reserved = d.reserved + ${credits}
      WHERE d."userId" = ${userId}::uuid AND d.day = ${isoDay}::date
        AND d.used + d.reserved + ${credits} <=
          (SELECT p."dailyCredits" FROM "User" u JOIN "Plan" p ON p.code = u."planCode" WHERE u.id = ${userId}::uuid)
          + COALESCE((SELECT SUM(g.credits) FROM "CreditGrant" g
                      WHERE g."userId" = ${userId}::uuid AND g."firstDay" <= ${isoDay}::date AND g."lastDay" >= ${isoDay}::date), 0)`;
    return updated === 1;
  }

  /** Turns a reservation into usage: `reserved` is released and `used` (at most `reserved`) is charged. */
  async settle(db: Db, userId: string, day: Date, reserved: number, used: number): Promise<void> {
    await db.dailyUsage.update({
      where: { userId_day: { userId, day } },
      data: { reserved: { decrement: reserved }, used: { increment: used } },
      select: { userId: true },
    });
  }
}
