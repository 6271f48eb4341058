import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { nextUtcMidnight, utcDay } from '../common/utc-day';
import { QuotaDto } from './dto/quota.response';
import { QuotaRepository } from './quota.repository';

@Injectable()
export class QuotaService {
  constructor(
    private readonly quota: QuotaRepository,
    private readonly clock: Clock,
  ) {}

  async current(user: Pick<SessionUser, 'id'>): Promise<QuotaDto> {
    const now = this.clock.now();
    const day = utcDay(now);
    const [account, usage, granted] = await Promise.all([
      this.quota.findPlanOfUser(user.id),
      this.quota.findUsageOfDay(user.id, day),
      this.quota.sumGrantsForDay(user.id, day),
    ]);
    if (!account)
      throw new AppError(
        'unauthenticated',
        'This session has no account anymore.',
      );
    const limit = account.plan.dailyCredits + granted;
    const used = usage?.used ?? 0;
    const reserved = usage?.reserved ?? 0;
    return {
      limit,
      used,
      reserved,
      remaining: Math.max(0, limit - used - reserved),
      resetsAt: nextUtcMidnight(now).toISOString(),
      plan: { code: account.plan.code, name: account.plan.name },
    };
  }
}
