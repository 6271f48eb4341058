import { InvitationDto, OrganizationDto } from './dto/org.response';
import { OrgRoleName } from './dto/org-input.dto';
import { InvitationRow } from './invitations.repository';
import { OrganizationRow } from './orgs.repository';

export function toOrganization(
  row: OrganizationRow,
  role: OrgRoleName,
): OrganizationDto {
  return {
    id: row.id,
    name: row.name,
    role,
    plan: { code: row.plan.code, name: row.plan.name },
    seats: row.seats,
    memberCount: row._count.members,
    subscription: row.planSubscription && {
      status: row.planSubscription.status,
      provider: row.planSubscription.provider,
      seats: row.planSubscription.seats,
      currentPeriodEnd:
        row.planSubscription.currentPeriodEnd?.toISOString() ?? null,
      cancelAtPeriodEnd: row.planSubscription.cancelAtPeriodEnd,
    },
    createdAt: row.createdAt.toISOString(),
  };
}

export function toInvitation(row: InvitationRow): InvitationDto {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
  };
}

/** An organization on a paid plan: it has a pool, and no more members than seats. */
export function isPaid(org: { planCode: string }): boolean {
  return org.planCode !== 'free';
}
