import { Injectable } from '@nestjs/common';
import {
  accountDeleted,
  AccountDeletionService,
} from '../account/deletion/account-deletion.service';
import { SessionUser } from '../auth/session-user';
import { SessionsService } from '../auth/sessions.service';
import { SubscriptionsService } from '../billing/subscriptions.service';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../common/pagination';
import { Db } from '../infra/prisma/prisma.service';
import { QuotaService } from '../quota/quota.service';
import { AdminActionsGate } from './admin-actions.gate';
import {
  AdminUserRow,
  AdminUsersRepository,
  LockedAccount,
} from './admin-users.repository';
import { AuditRepository } from '../audit/audit.repository';
import {
  AdminUserDetailDto,
  AdminUserPageDto,
  AdminUserQueryDto,
  AdminUserSummaryDto,
  ChangePlanDto,
  ReasonDto,
  SetRoleDto,
} from './dto/admin-user.dto';

/**
 * Accounts as admins run them. Every change locks the account row, checks, writes and records the audit
 * entry (admin, action, target, before/after, reason) in one transaction.
 */
@Injectable()
export class AdminUsersService {
  constructor(
    private readonly users: AdminUsersRepository,
    private readonly audit: AuditRepository,
    private readonly subscriptions: SubscriptionsService,
    private readonly quota: QuotaService,
    private readonly clock: Clock,
    private readonly gate: AdminActionsGate,
    private readonly sessions: SessionsService,
    private readonly deletion: AccountDeletionService,
  ) {}

  async list(query: AdminUserQueryDto): Promise<AdminUserPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.users.findPage(
      query.email,
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.createdAt, id: row.id }),
      toSummary,
    );
  }

  async get(id: string): Promise<AdminUserDetailDto> {
    const row = isUuid(id)
      ? await this.users.findDetail(id, this.clock.now())
      : null;
    if (!row) throw notFound();
    const [subscription, usageToday] = await Promise.all([
      this.subscriptions.view(row),
      this.quota.current(row),
    ]);
    return {
      ...toSummary(row),
      subscription,
      usageToday,
      sessions: row.sessions.map((session) => ({
        id: session.id,
        createdAt: session.createdAt.toISOString(),
        lastSeenAt: session.lastSeenAt.toISOString(),
        expiresAt: session.expiresAt.toISOString(),
        userAgent: session.userAgent,
        ip: session.ip,
      })),
    };
  }

  async changePlan(
    admin: SessionUser,
    id: string,
    input: ChangePlanDto,
  ): Promise<AdminUserDetailDto> {
    if (!(await this.users.findActivePlanCode(input.planCode))) {
      throw new AppError(
        'validation_failed',
        `There is no plan '${input.planCode}'.`,
        {
          errors: [
            {
              field: 'planCode',
              code: 'unknown_plan',
              message: 'planCode must be a plan listed by GET /v1/plans',
            },
          ],
        },
      );
    }
    await this.change(
      admin,
      id,
      'user.plan',
      input.reason,
      async (db, account) => {
        const subscriptionId =
          await this.subscriptions.grantingSubscriptionOfPlan(
            db,
            id,
            input.planCode,
          );
        await this.users.setPlan(db, id, input.planCode, subscriptionId);
        const before = {
          planCode: account.planCode,
          planSubscriptionId: account.planSubscriptionId,
          planSetByAdmin: account.planSetByAdmin,
        };
        return [
          before,
          {
            planCode: input.planCode,
            planSubscriptionId: subscriptionId,
            planSetByAdmin: subscriptionId === null,
          },
        ];
      },
    );
    return this.get(id);
  }

  async disable(
    admin: SessionUser,
    id: string,
    input: ReasonDto,
  ): Promise<AdminUserDetailDto> {
    await this.change(
      admin,
      id,
      'user.disable',
      input.reason,
      async (db, account) => {
        if (account.role === 'admin')
          await this.refuseRemovingLastAdmin(db, account, 'disable');
        const sessionsEnded = await this.users.disable(
          db,
          id,
          this.clock.now(),
        );
        return [
          { disabled: account.disabledAt !== null },
          { disabled: true, sessionsEnded },
        ];
      },
    );
    return this.get(id);
  }

  async enable(
    admin: SessionUser,
    id: string,
    input: ReasonDto,
  ): Promise<AdminUserDetailDto> {
    await this.change(
      admin,
      id,
      'user.enable',
      input.reason,
      async (db, account) => {
        await this.users.enable(db, id);
        return [{ disabled: account.disabledAt !== null }, { disabled: false }];
      },
    );
    return this.get(id);
  }

  /** For an owner who lost both the authenticator and the recovery codes: sign-in asks for the password only again. */
  async resetTwoFactor(
    admin: SessionUser,
    id: string,
    input: ReasonDto,
  ): Promise<AdminUserDetailDto> {
    await this.change(
      admin,
      id,
      'user.two_factor_reset',
      input.reason,
      async (db) => {
        const wasOn = await this.users.resetTwoFactor(db, id);
        return [{ twoFactorEnabled: wasOn }, { twoFactorEnabled: false }];
      },
    );
    return this.get(id);
  }

  async setRole(
    admin: SessionUser,
    id: string,
    input: SetRoleDto,
  ): Promise<AdminUserDetailDto> {
    await this.change(
      admin,
      id,
      'user.role',
      input.reason,
      async (db, account) => {
        if (account.role === 'admin' && input.role === 'user')
          await this.refuseRemovingLastAdmin(db, account, 'demote');
        await this.users.setRole(db, id, input.role);
        return [{ role: account.role }, { role: input.role }];
      },
    );
    return this.get(id);
  }

  /**
   * The account's erasure, as its owner's DELETE /v1/auth/me does it but without re-authentication; inside its
   * transaction, the admin gate first. Audited with the admin and the reason.
   */
  async delete(
    admin: SessionUser,
    id: string,
    input: ReasonDto,
  ): Promise<void> {
    if (!isUuid(id)) throw notFound();
    await this.deletion.erase({
      userId: id,
      adminId: admin.id,
      reason: input.reason,
      enter: (db) => this.gate.enter(db, admin),
    });
  }

  /** One transaction: the admin gate, the account's lock, `work` (which answers before/after) and its audit entry. */
  private async change(
    admin: SessionUser,
    id: string,
    action: string,
    reason: string,
    work: (
      db: Db,
      account: LockedAccount,
    ) => Promise<[Record<string, unknown>, Record<string, unknown>]>,
  ): Promise<void> {
    if (!isUuid(id)) throw notFound();
    await this.users.inTransaction(async (db) => {
      await this.gate.enter(db, admin);
      const account = await this.users.lockAccount(db, id);
      if (!account) throw notFound();
      if (account.deletedAt) throw accountDeleted();
      const [before, after] = await work(db, account);
      await this.audit.record(db, {
        adminId: admin.id,
        action,
        targetType: 'user',
        targetId: id,
        before: toJson(before),
        after: toJson(after),
        reason,
      });
    });
    // Every instance hears of the change from the database; this one applies it before answering.
    this.sessions.forgetUser(id);
  }

  private async refuseRemovingLastAdmin(
    db: Db,
    account: LockedAccount,
    verb: 'demote' | 'disable',
  ): Promise<void> {
    if ((await this.users.countActiveAdminsOtherThan(db, account.id)) === 0) {
      throw new AppError(
        'last_admin',
        `You cannot ${verb} the last active admin; promote another account first.`,
      );
    }
  }
}

function toSummary(row: AdminUserRow): AdminUserSummaryDto {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    plan: { code: row.plan.code, name: row.plan.name },
    disabledAt: row.disabledAt?.toISOString() ?? null,
    deletedAt: row.deletedAt?.toISOString() ?? null,
    emailVerified: row.emailVerifiedAt !== null,
    twoFactorEnabled: row.totpEnabledAt !== null,
    createdAt: row.createdAt.toISOString(),
  };
}

function toJson(value: Record<string, unknown>): {
  [key: string]: string | number | boolean | null;
} {
  return JSON.parse(JSON.stringify(value)) as {
    [key: string]: string | number | boolean | null;
  };
}

function notFound(): AppError {
  return new AppError('not_found', 'There is no such user.');
}
