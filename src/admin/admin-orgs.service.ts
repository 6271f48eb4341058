import { Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { SessionUser } from '../auth/session-user';
import {
  FREE_PLAN,
  SubscriptionsService,
} from '../billing/subscriptions.service';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../common/pagination';
import { AdminActionsGate } from './admin-actions.gate';
import {
  AdminOrgRow,
  AdminOrgsRepository,
  OrganizationPlan,
} from './admin-orgs.repository';
import {
  AdminOrgDto,
  AdminOrgPageDto,
  AdminOrgPlanDto,
  AdminOrgQueryDto,
} from './dto/admin-org.dto';

/**
 * Organizations as admins run them: the list, and plans sold by contract (Enterprise) or set by hand. The
 * change locks the organization after its subscriptions' locks (as their webhooks take them), checks, writes
 * and records the audit entry in one transaction.
 * docs/adr/0062-organizations.md
 */
@Injectable()
export class AdminOrgsService {
  constructor(
    private readonly orgs: AdminOrgsRepository,
    private readonly audit: AuditRepository,
    private readonly subscriptions: SubscriptionsService,
    private readonly gate: AdminActionsGate,
  ) {}

  async list(query: AdminOrgQueryDto): Promise<AdminOrgPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.orgs.findPage(
      query.name,
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.createdAt, id: row.id }),
      toAdminOrg,
    );
  }

  /**
   * Sets the organization's plan and seats. The plan is the admin's (renewals, seat changes and lapses of its
   * subscriptions leave it alone; a new purchase replaces it), unless the organization has a granting
   * subscription of exactly that plan and those seats: then billing manages it again.
   */
  async setPlan(
    admin: SessionUser,
    id: string,
    input: AdminOrgPlanDto,
  ): Promise<AdminOrgDto> {
    if (!(await this.orgs.findActivePlanCode(input.planCode)))
      throw fieldProblem(
        'planCode',
        'unknown_plan',
        `There is no plan '${input.planCode}'.`,
        'planCode must be a plan listed by GET /v1/plans',
      );
    if (input.planCode === FREE_PLAN && input.seats !== 0)
      throw fieldProblem(
        'seats',
        'free_plan_has_no_seats',
        'The free plan has no seats (and no pool): send seats 0.',
        'seats must be 0 on the free plan',
      );
    if (!isUuid(id)) throw notFound();
    await this.orgs.inTransaction(async (db) => {
      await this.gate.enter(db, admin);
      await this.subscriptions.lockSubscriptionsOfOrganization(db, id);
      const org = await this.orgs.lockOrganization(db, id);
      if (!org) throw notFound();
      if (input.planCode !== FREE_PLAN && input.seats < org.members)
        throw new AppError(
          'seats_exhausted',
          `The organization has ${org.members} members: a paid plan needs at least as many seats.`,
          {
            errors: [
              {
                field: 'seats',
                code: 'below_member_count',
                message: `seats must be at least ${org.members}, the number of members`,
              },
            ],
          },
        );
      const subscriptionId =
        await this.subscriptions.grantingSubscriptionOfOrganization(
          db,
          id,
          input.planCode,
          input.seats,
        );
      const after: OrganizationPlan = {
        planCode: input.planCode,
        seats: input.seats,
        planSubscriptionId: subscriptionId,
        planSetByAdmin: subscriptionId === null,
      };
      await this.orgs.setPlan(db, id, after);
      await this.audit.record(db, {
        adminId: admin.id,
        action: 'org.plan',
        targetType: 'organization',
        targetId: id,
        before: {
          planCode: org.planCode,
          seats: org.seats,
          planSubscriptionId: org.planSubscriptionId,
          planSetByAdmin: org.planSetByAdmin,
        },
        after: { ...after },
        reason: input.reason ?? null,
      });
    });
    const row = await this.orgs.findOne(id);
    if (!row) throw notFound();
    return toAdminOrg(row);
  }
}

function toAdminOrg(row: AdminOrgRow): AdminOrgDto {
  return {
    id: row.id,
    name: row.name,
    planCode: row.planCode,
    seats: row.seats,
    memberCount: row._count.members,
    planSetByAdmin: row.planSetByAdmin,
    createdAt: row.createdAt.toISOString(),
  };
}

function fieldProblem(
  field: string,
  code: string,
  detail: string,
  message: string,
): AppError {
  return new AppError('validation_failed', detail, {
    errors: [{ field, code, message }],
  });
}

function notFound(): AppError {
  return new AppError('not_found', 'There is no such organization.');
}
