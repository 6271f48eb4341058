import { runDetails } from '../ledger/ledger.repository';
import { Injectable } from '@nestjs/common';
import { accountDeleted } from '../account/deletion/account-deletion.service';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../common/pagination';
import { utcDay } from '../common/utc-day';
import { QuotaService } from '../quota/quota.service';
import { AdminActionsGate } from './admin-actions.gate';
import {
  AdminBillingRepository,
  AdminLedgerRow,
  UsageFilter,
} from './admin-billing.repository';
import { AdminUsersRepository } from './admin-users.repository';
import { AuditRepository } from '../audit/audit.repository';
import {
  AdminLedgerEntryDto,
  AdminLedgerPageDto,
  AdminLedgerQueryDto,
  CreditGrantResultDto,
  DailyUsageDto,
  GrantCreditsDto,
  UsageFilterDto,
} from './dto/admin-billing.dto';

const DAY_MS = 86_400_000;
const MAX_SPAN_DAYS = 366;
const DEFAULT_USAGE_DAYS = 30;

/** Credit grants and the ledger and usage views. */
@Injectable()
export class AdminBillingService {
  constructor(
    private readonly billing: AdminBillingRepository,
    private readonly users: AdminUsersRepository,
    private readonly audit: AuditRepository,
    private readonly quota: QuotaService,
    private readonly clock: Clock,
    private readonly gate: AdminActionsGate,
  ) {}

  /**
   * Adds `credits` to each day of the period: a CreditGrant (what the quota reads), its ledger line (kind
   * grant, with the admin and reason) and the audit entry, in one transaction under the account's lock.
   */
  async grantCredits(
    admin: SessionUser,
    userId: string,
    input: GrantCreditsDto,
  ): Promise<CreditGrantResultDto> {
    const today = utcDay(this.clock.now());
    const firstDay = input.firstDay
      ? parseDay('firstDay', input.firstDay)
      : today;
    const lastDay = input.lastDay
      ? parseDay('lastDay', input.lastDay)
      : firstDay;
    refuseBadPeriod(firstDay, lastDay, today);
    if (!isUuid(userId)) throw userNotFound();
    const id = await this.users.inTransaction(async (db) => {
      await this.gate.enter(db, admin);
      const account = await this.users.lockAccount(db, userId);
      if (!account) throw userNotFound();
      if (account.deletedAt) throw accountDeleted();
      const grantId = await this.billing.insertGrant(db, {
        userId,
        adminId: admin.id,
        credits: input.credits,
        firstDay,
        lastDay,
        reason: input.reason,
      });
      const after = {
        grantId,
        credits: input.credits,
        firstDay: isoDay(firstDay),
        lastDay: isoDay(lastDay),
      };
      await this.audit.record(db, {
        adminId: admin.id,
        action: 'user.credits',
        targetType: 'user',
        targetId: userId,
        after,
        reason: input.reason,
      });
      return grantId;
    });
    return {
      grant: {
        id,
        credits: input.credits,
        firstDay: isoDay(firstDay),
        lastDay: isoDay(lastDay),
        reason: input.reason,
      },
      usageToday: await this.quota.current({ id: userId }),
    };
  }

  async ledger(query: AdminLedgerQueryDto): Promise<AdminLedgerPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.billing.findLedgerPage(
      toFilter(query),
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.createdAt, id: row.id }),
      toLedgerEntry,
    );
  }

  async dailyUsage(query: UsageFilterDto): Promise<DailyUsageDto> {
    const today = utcDay(this.clock.now());
    const to = query.to ? parseDay('to', query.to) : today;
    const from = query.from
      ? parseDay('from', query.from)
      : new Date(Math.max(0, to.getTime() - (DEFAULT_USAGE_DAYS - 1) * DAY_MS));
    refuseBadRange(from, to);
    const rows = await this.billing.dailyUsage({
      ...toFilter(query),
      from,
      before: new Date(to.getTime() + DAY_MS),
    });
    return {
      data: rows.map((row) => ({
        day: row.day,
        model: row.modelId,
        requests: Number(row.requests),
        inputTokens: Number(row.inputTokens),
        outputTokens: Number(row.outputTokens),
        credits: Number(row.credits),
      })),
    };
  }
}

function toFilter(query: UsageFilterDto): UsageFilter {
  const from = query.from ? parseDay('from', query.from) : undefined;
  const to = query.to ? parseDay('to', query.to) : undefined;
  if (from && to && to < from) refuseBadRange(from, to);
  return {
    userId: query.userId,
    modelId: query.model,
    from,
    before: to ? new Date(to.getTime() + DAY_MS) : undefined,
  };
}

function toLedgerEntry({
  modelId,
  createdAt,
  steps,
  toolCalls,
  ...row
}: AdminLedgerRow): AdminLedgerEntryDto {
  return {
    ...row,
    ...runDetails({ steps, toolCalls }),
    model: modelId,
    createdAt: createdAt.toISOString(),
  };
}

/** A real calendar day (the pattern lets 2026-02-31 through), as its UTC midnight. */
function parseDay(field: string, value: string): Date {
  const day = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(day.getTime()) || isoDay(day) !== value)
    throw invalid(field, `${field} is not a calendar day`);
  if (day.getUTCFullYear() < 1970 || day.getUTCFullYear() > 9999)
    throw invalid(field, `${field} must be between 1970 and 9999`);
  return day;
}

function refuseBadPeriod(firstDay: Date, lastDay: Date, today: Date): void {
  if (lastDay < firstDay)
    throw invalid('lastDay', 'lastDay must not be before firstDay');
  if (lastDay < today)
    throw invalid('lastDay', 'the period must include today or a later day');
  if ((lastDay.getTime() - firstDay.getTime()) / DAY_MS >= MAX_SPAN_DAYS)
    throw invalid('lastDay', `a grant covers at most ${MAX_SPAN_DAYS} days`);
  if ((firstDay.getTime() - today.getTime()) / DAY_MS > MAX_SPAN_DAYS)
    throw invalid(
      'firstDay',
      `a grant starts at most ${MAX_SPAN_DAYS} days from today`,
    );
}

function refuseBadRange(from: Date, to: Date): void {
  if (to < from) throw invalid('to', 'to must not be before from');
  if ((to.getTime() - from.getTime()) / DAY_MS >= MAX_SPAN_DAYS)
    throw invalid('from', `a range covers at most ${MAX_SPAN_DAYS} days`);
}

function isoDay(day: Date): string {
  return day.toISOString().slice(0, 10);
}

function invalid(field: string, message: string): AppError {
  return new AppError('validation_failed', message, {
    errors: [{ field, code: 'invalid_day', message }],
  });
}

function userNotFound(): AppError {
  return new AppError('not_found', 'There is no such user.');
}
