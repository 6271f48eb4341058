import { Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { OrgAccess } from '../orgs/org-access';
import { BillingRepository } from './billing.repository';
import { OrgSeatChangeDto, OrgSeatsDto } from './dto/org-subscription.dto';
import { subscriptionForSeatChange } from './organization-subscriptions';
import { PaymentGateways } from './providers/payment-gateways';

/**
 * Seat changes of an organization's subscription: asked of the provider (the prorated difference charged now;
 * the provider applies the new quantity once it is paid), confirmed by its webhook. Nothing of ours changes
 * before that confirmation but the audit entry of the request, so a request the provider refuses, or whose
 * charge is never paid, leaves the pool and the seat limit as they were.
 * docs/adr/0062-organizations.md
 */
@Injectable()
export class OrgSubscriptionService {
  constructor(
    private readonly billing: BillingRepository,
    private readonly gateways: PaymentGateways,
    private readonly access: OrgAccess,
    private readonly audit: AuditRepository,
  ) {}

  async changeSeats(
    user: SessionUser,
    organizationId: string,
    input: OrgSeatsDto,
  ): Promise<OrgSeatChangeDto> {
    const { organization } = await this.access.require(
      user,
      organizationId,
      'admin',
    );
    const subscription = subscriptionForSeatChange(
      await this.billing.findLiveSubscriptionsOfOrganization(organizationId),
      organization.planSubscriptionId,
    );
    if (!subscription)
      throw new AppError(
        'not_found',
        'The organization has no live subscription: buy seats with POST /v1/billing/checkout (organizationId, seats).',
      );
    const members = organization._count.members;
    if (input.seats < members)
      throw new AppError(
        'seats_exhausted',
        `The organization has ${members} members, so it cannot have fewer seats: remove members first.`,
        {
          errors: [
            {
              field: 'seats',
              code: 'below_member_count',
              message: `seats must be at least ${members}, the number of members`,
            },
          ],
        },
      );
    await this.gateways
      .get(subscription.provider)
      .changeQuantity(subscription.providerSubscriptionId, input.seats);
    await this.billing.inTransaction((db) =>
      this.audit.record(db, {
        adminId: user.id,
        action: 'org.seats.request',
        targetType: 'organization',
        targetId: organizationId,
        before: { seats: subscription.seats },
        after: {
          seats: input.seats,
          subscriptionId: subscription.id,
          provider: subscription.provider,
        },
      }),
    );
    return {
      seats: input.seats,
      status: 'pending',
      currentSeats: organization.seats,
      provider: subscription.provider,
    };
  }
}
