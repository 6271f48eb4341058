import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { nextUtcMidnight, utcDay } from '../common/utc-day';
import { UsageQueryDto } from './dto/org-input.dto';
import { OrgQuotaDto, OrgUsageDto } from './dto/org.response';
import { OrgAccess } from './org-access';
import { isPaid } from './org-mappers';
import { OrgsRepository } from './orgs.repository';

const DAY_MS = 86_400_000;
/** The longest range one usage report covers. */
const MAX_USAGE_DAYS = 366;
const DEFAULT_USAGE_DAYS = 30;

/** The organization's pool today and its usage per member per day (docs/adr/0062-organizations.md). */
@Injectable()
export class OrgQuotaService {
  constructor(
    private readonly orgs: OrgsRepository,
    private readonly access: OrgAccess,
    private readonly clock: Clock,
  ) {}

  async quota(user: SessionUser, orgId: string): Promise<OrgQuotaDto> {
    const membership = await this.access.require(user, orgId);
    const org = membership.organization;
    const now = this.clock.now();
    const usage = await this.orgs.findUsageOfDay(orgId, user.id, utcDay(now));
    const poolLimit = isPaid(org) ? org.plan.dailyCredits * org.seats : 0;
    const pool = usage.pool ?? { used: 0, reserved: 0 };
    const member = usage.member ?? { used: 0, reserved: 0 };
    const poolLeft = Math.max(0, poolLimit - pool.used - pool.reserved);
    const cap = membership.dailyCreditLimit;
    const capLeft =
      cap === null
        ? poolLeft
        : Math.max(0, cap - member.used - member.reserved);
    return {
      plan: { code: org.plan.code, name: org.plan.name },
      seats: org.seats,
      pool: { limit: poolLimit, ...pool, remaining: poolLeft },
      member: {
        limit: cap,
        ...member,
        remaining: Math.min(poolLeft, capLeft),
      },
      resetsAt: nextUtcMidnight(now).toISOString(),
    };
  }

  async usage(
    user: SessionUser,
    orgId: string,
    query: UsageQueryDto,
  ): Promise<OrgUsageDto> {
    await this.access.require(user, orgId, 'admin');
    const to = query.to ? parseDay(query.to, 'to') : utcDay(this.clock.now());
    const from = query.from
      ? parseDay(query.from, 'from')
      : new Date(to.getTime() - (DEFAULT_USAGE_DAYS - 1) * DAY_MS);
    const days = (to.getTime() - from.getTime()) / DAY_MS + 1;
    if (days < 1) throw rangeProblem('from', 'from must not be after to');
    if (days > MAX_USAGE_DAYS)
      throw rangeProblem(
        'from',
        `the range covers at most ${MAX_USAGE_DAYS} days`,
      );
    const rows = await this.orgs.usagePerMemberPerDay(
      orgId,
      from,
      new Date(to.getTime() + DAY_MS),
    );
    return {
      from: isoDay(from),
      to: isoDay(to),
      data: rows,
    };
  }
}

/** Days the ledger can hold: none before 2000 (the database has no year 0 either). */
const FIRST_DAY = '2000-01-01';

function parseDay(value: string, field: string): Date {
  const day = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime()) || isoDay(day) !== value)
    throw rangeProblem(field, `${field} must be a real date YYYY-MM-DD`);
  if (value < FIRST_DAY)
    throw rangeProblem(field, `${field} must be ${FIRST_DAY} or later`);
  return day;
}

function isoDay(day: Date): string {
  return day.toISOString().slice(0, 10);
}

function rangeProblem(field: string, message: string): AppError {
  return new AppError(
    'validation_failed',
    `The range is not valid: ${message}.`,
    {
      errors: [{ field, code: 'invalid_range', message }],
    },
  );
}
