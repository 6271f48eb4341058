import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { OrgRoleName } from './dto/org-input.dto';
import { isPaid } from './org-mappers';
import { OrganizationRow, OrgsRepository } from './orgs.repository';

const RANK: Record<OrgRoleName, number> = { member: 1, admin: 2, owner: 3 };

export interface OrgMembership {
  organizationId: string;
  role: OrgRoleName;
  dailyCreditLimit: number | null;
  organization: OrganizationRow;
}

/** Whether `role` is `atLeast` or above (owner > admin > member). */
export function hasRole(role: OrgRoleName, atLeast: OrgRoleName): boolean {
  return RANK[role] >= RANK[atLeast];
}

export function organizationNotFound(): AppError {
  return new AppError('not_found', 'No such organization.');
}

/** 403: the organization has no paid plan, so no pool to bill. */
export function organizationPlanRequired(): AppError {
  return new AppError(
    'org_plan_required',
    'The organization has no paid plan, so no credit pool: an admin or owner buys seats ' +
      '(POST /v1/billing/checkout with organizationId and seats).',
  );
}

/**
 * The one place access to an organization is decided: the caller's membership, read from the database
 * on every request (one primary-key lookup), so a removal or a role change applies to the very next
 * request on every instance. Anyone not a member gets 404, as if it did not exist; a member whose role
 * is below what the action needs gets 403 `org_role_required`.
 * docs/adr/0062-organizations.md
 */
@Injectable()
export class OrgAccess {
  constructor(private readonly orgs: OrgsRepository) {}

  async require(
    user: Pick<SessionUser, 'id'>,
    organizationId: string,
    atLeast: OrgRoleName = 'member',
  ): Promise<OrgMembership> {
    const membership = isUuid(organizationId)
      ? await this.orgs.findMembership(organizationId, user.id)
      : null;
    if (!membership) throw organizationNotFound();
    if (!hasRole(membership.role, atLeast))
      throw new AppError(
        'org_role_required',
        `This needs the ${atLeast} role${atLeast === 'owner' ? '' : ' or above'} in the organization; yours is ${membership.role}.`,
      );
    return { organizationId, ...membership };
  }

  /**
   * The organization as the payer of a run the caller starts: a member (404 otherwise) of an organization
   * with a pool (403 `org_plan_required` otherwise). The claim checks both again in its transaction.
   */
  async payer(
    user: Pick<SessionUser, 'id'>,
    organizationId: string,
  ): Promise<{ organizationId: string; planCode: string }> {
    const { organization } = await this.require(user, organizationId);
    if (!isPaid(organization) || organization.seats <= 0)
      throw organizationPlanRequired();
    return { organizationId, planCode: organization.planCode };
  }
}
