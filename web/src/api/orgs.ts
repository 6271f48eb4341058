import { api, unwrap, type Schemas } from './client';

export type Organization = Schemas['OrganizationDto'];
export type OrgRole = Organization['role'];
export type OrgMember = Schemas['OrgMemberDto'];
export type Invitation = Schemas['InvitationDto'];
export type OrgQuota = Schemas['OrgQuotaDto'];
export type OrgUsage = Schemas['OrgUsageDto'];
type Provider = Schemas['CheckoutRequestDto']['provider'];
export type SeatChange = Schemas['OrgSeatChangeDto'];

export const ROLE_NAMES: Record<OrgRole, string> = {
  owner: 'Owner',
  admin: 'Admin',
  member: 'Member',
};

/** Admins and owners change the organization, its members, invitations, Skills and seats. */
export function canManage(org: Pick<Organization, 'role'>): boolean {
  return org.role === 'owner' || org.role === 'admin';
}

/** An organization on a paid plan has a credit pool (and at most `seats` members). */
export function hasPool(org: Pick<Organization, 'plan' | 'seats'>): boolean {
  return org.plan.code !== 'free' && org.seats > 0;
}

/**
 * Seats on the Team plan for an organization: a checkout at the provider (POST /v1/billing/checkout with
 * organizationId and seats), answered with the page to send the buyer to.
 */
export async function startSeatCheckout(body: {
  organizationId: string;
  seats: number;
  provider: Provider;
  planId: string;
}): Promise<string> {
  return unwrap(await api.POST('/v1/billing/checkout', { body })).url;
}

/** Asks the provider for another number of seats (202): they apply once its webhook confirms the change. */
export async function changeSeats(
  orgId: string,
  seats: number,
): Promise<SeatChange> {
  return unwrap(
    await api.PATCH('/v1/orgs/{id}/subscription', {
      params: { path: { id: orgId } },
      body: { seats },
    }),
  );
}
