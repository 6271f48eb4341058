import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { OrgAccess } from '../orgs/org-access';
import {
  BillingRepository,
  CheckoutClaim,
  CheckoutKey,
} from './billing.repository';
import { CheckoutRequestDto } from './dto/checkout.request';
import { CheckoutDto } from './dto/checkout.response';
import { PaymentGateways } from './providers/payment-gateways';

/** The one plan sold per seat to organizations; the others are personal (or, Enterprise, set by an admin). */
export const ORGANIZATION_PLAN = 'team';

/** A pending checkout is offered again for this long; after it a click opens a new provider session. */
const CHECKOUT_REUSE_MS = 60 * 60 * 1000;
/** A pending checkout still without a URL after this long was left by a request that died. */
const CHECKOUT_ABANDONED_MS = 60 * 1000;
/** How long a concurrent click waits for the first one's provider session (10 s per attempt, one retry). */
const PENDING_WAIT_MS = 25_000;
const PENDING_POLL_MS = 150;

export interface CheckoutResult {
  checkout: CheckoutDto;
  /** False when a pending checkout of the same plan and provider was handed back (a double click). */
  created: boolean;
}

// docs/adr/0047-checkout.md
@Injectable()
export class CheckoutService {
  constructor(
    private readonly billing: BillingRepository,
    private readonly gateways: PaymentGateways,
    private readonly access: OrgAccess,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Opens a checkout of a plan. The price is the plan row's; every refusal happens before any provider call.
   * The pending row is claimed first (one per user, plan and provider: a partial unique index), then the
   * provider is called outside any transaction, so a slow provider holds no database connection. A concurrent
   * click finds the claimed row and waits for its URL: one provider session for a double click.
   * With `organizationId`, the caller (admin or owner of it) buys `seats` of the Team plan for the
   * organization: the amount is the plan's price times the seats, and the provider charges the plan's price
   * per unit of its own quantity field.
   */
  async start(
    user: SessionUser,
    input: CheckoutRequestDto,
  ): Promise<CheckoutResult> {
    const organizationId = input.organizationId ?? null;
    if (input.seats !== undefined && organizationId === null)
      throw new AppError(
        'validation_failed',
        'Seats are bought for an organization: send organizationId with seats, or leave seats out.',
        {
          errors: [
            {
              field: 'seats',
              code: 'requires_organization',
              message: 'seats is only allowed with organizationId',
            },
          ],
        },
      );
    const seats = input.seats ?? 1;
    // A non-member learns nothing about the organization (404), whatever else is wrong with the request.
    if (organizationId)
      await this.access.require(user, organizationId, 'admin');
    const plan = await this.billing.findActivePlan(input.planId);
    if (!plan)
      throw new AppError(
        'not_found',
        `There is no plan '${input.planId}'; GET /v1/plans lists them.`,
      );
    if (
      !plan.checkoutAllowed ||
      plan.priceInterval === null ||
      plan.priceAmount <= 0
    ) {
      const detail =
        plan.priceInterval === null
          ? `The ${plan.name} plan is sold by contract: contact sales.`
          : `The ${plan.name} plan is free and needs no checkout.`;
      throw new AppError('plan_not_checkoutable', detail);
    }
    if (organizationId && plan.code !== ORGANIZATION_PLAN)
      throw new AppError(
        'plan_not_for_organizations',
        `Organizations buy seats of the ${ORGANIZATION_PLAN} plan; the ${plan.name} plan is bought for yourself, without organizationId.`,
        {
          errors: [
            {
              field: 'planId',
              code: 'plan_not_for_organizations',
              message: `planId must be ${ORGANIZATION_PLAN} with organizationId`,
            },
          ],
        },
      );
    const gateway = this.gateways.get(input.provider);
    if (!gateway.canCheckout())
      throw new AppError(
        'provider_not_configured',
        `Checkout through ${input.provider} is not configured on this server.`,
      );
    if (!organizationId) await this.refuseIfRenewing(user);

    const key: CheckoutKey = {
      userId: user.id,
      planCode: plan.code,
      provider: input.provider,
      organizationId,
      seats,
    };
    const id = randomUUID();
    const interval = plan.priceInterval;
    const now = this.clock.now().getTime();
    const claim = await this.billing.claimCheckout(
      {
        ...key,
        id,
        // Computed here from the plan row, never taken from the request; the CHECK keeps seats >= 1.
        amount: plan.priceAmount * seats,
        currency: plan.priceCurrency,
        interval,
      },
      new Date(now - CHECKOUT_REUSE_MS),
      new Date(now - CHECKOUT_ABANDONED_MS),
    );
    if (claim !== 'claimed') {
      refuseOrganizationClaim(claim);
      return { checkout: await this.awaitPendingUrl(key), created: false };
    }

    try {
      const session = await gateway.createCheckout({
        checkoutId: id,
        userId: user.id,
        email: user.email,
        organizationId,
        quantity: seats,
        plan: {
          code: plan.code,
          name: plan.name,
          amount: plan.priceAmount,
          currency: plan.priceCurrency,
          interval,
        },
        successUrl: `${this.config.appUrl}/billing/success?checkoutId=${id}`,
        cancelUrl: `${this.config.appUrl}/billing/canceled?checkoutId=${id}`,
      });
      if (
        !(await this.billing.recordProviderSession(
          id,
          session.sessionId,
          session.url,
        ))
      ) {
        throw new AppError(
          'payment_provider_error',
          `${input.provider} answered a checkout that belongs to another purchase; nothing was charged. Try again.`,
        );
      }
      return {
        checkout: {
          checkoutId: id,
          provider: input.provider,
          url: session.url,
        },
        created: true,
      };
    } catch (error) {
      // If even this fails, the row is given up as abandoned a minute later.
      await this.billing.markCheckoutFailed(id).catch(() => undefined);
      throw error;
    }
  }

  /** The checkout another request of the same user is opening right now: its URL once it has one. */
  private async awaitPendingUrl(key: CheckoutKey): Promise<CheckoutDto> {
    const deadline = Date.now() + PENDING_WAIT_MS;
    for (;;) {
      const pending = await this.billing.findPendingCheckout(key);
      if (pending?.url)
        return {
          checkoutId: pending.id,
          provider: key.provider,
          url: pending.url,
        };
      if (!pending)
        throw new AppError(
          'payment_provider_error',
          'The checkout your other request was opening failed; nothing was charged. Try again.',
        );
      if (Date.now() >= deadline) {
        throw new AppError(
          'conflict',
          'Your other request is still opening this checkout; try again in a moment.',
          { headers: { 'Retry-After': '2' } },
        );
      }
      await new Promise((done) => setTimeout(done, PENDING_POLL_MS));
    }
  }

  /** A second subscription would bill twice; one that ends at period end may be replaced. */
  private async refuseIfRenewing(user: SessionUser): Promise<void> {
    const now = this.clock.now();
    const granting = await this.billing.findGrantingSubscriptionsOfUser(
      user.id,
      now,
    );
    const renewing = granting.find(
      (subscription) => !subscription.cancelAtPeriodEnd,
    );
    if (renewing) {
      throw new AppError(
        'subscription_exists',
        `You already have a renewing subscription to the ${renewing.planCode} plan; cancel it before buying another.`,
      );
    }
  }
}

/** The claim's refusals for an organization (a plain `pending` is the caller's own double click). */
function refuseOrganizationClaim(
  claim: Exclude<CheckoutClaim, 'claimed'>,
): void {
  if (claim === 'organization_subscribed')
    throw new AppError(
      'subscription_exists',
      'The organization already has a renewing subscription: change its seats with PATCH /v1/orgs/{id}/subscription instead.',
    );
  if (claim === 'organization_checkout_pending')
    throw new AppError(
      'conflict',
      'Another checkout for this organization is open (by another admin, or through the other provider); complete it, or try again when it has expired (an hour).',
    );
}
