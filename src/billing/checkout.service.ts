import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { OrgAccess, OrgMembership } from '../orgs/org-access';
import {
  BillingRepository,
  CheckoutKey,
  NewCheckout,
  PendingCheckout,
} from './billing.repository';
import { CheckoutRequestDto } from './dto/checkout.request';
import { CheckoutDto } from './dto/checkout.response';
import { isRenewing } from './organization-subscriptions';
import { PaymentGateways } from './providers/payment-gateways';

/** The one plan sold per seat to organizations; the others are personal (or, Enterprise, set by an admin). */
export const ORGANIZATION_PLAN = 'team';

/**
 * A pending checkout is offered again for this long; after it a click opens a new provider session. Stripe
 * sessions are opened to expire at the same moment (`expires_at`, which Stripe allows from 30 minutes to 24
 * hours), so a checkout we no longer count as pending cannot be paid there either.
 */
export const CHECKOUT_REUSE_MS = 60 * 60 * 1000;
/** A pending checkout still without a URL after this long was left by a request that died. */
const CHECKOUT_ABANDONED_MS = 60 * 1000;
/** How long a concurrent click waits for the first one's provider session (10 s per attempt, one retry). */
const PENDING_WAIT_MS = 25_000;
const PENDING_POLL_MS = 150;

/**
 * The claim's outcome: a new pending checkout, or the same order already pending (a double click), or, for
 * an organization, refused because another checkout of it is pending or a subscription already renews.
 */
type CheckoutClaim =
  | 'claimed'
  | 'pending'
  | 'organization_checkout_pending'
  | 'organization_subscribed';

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
    private readonly log: AppLogger,
  ) {}

  /**
   * Opens a checkout of a plan. The price is the plan row's; every refusal happens before any provider call.
   * The pending row is claimed first (one per user, plan and provider: a partial unique index), then the
   * provider is called outside any transaction, so a slow provider holds no database connection. A concurrent
   * click finds the claimed row and waits for its URL: one provider session for a double click. The checkouts
   * the claim gave up are expired at their provider too, so they cannot be paid any more.
   * With `organizationId`, the caller (admin or owner of it) buys `seats` of the Team plan for the
   * organization: the amount is the plan's price times the seats, and the provider charges the plan's price
   * per unit of its own quantity field.
   */
  async start(
    user: SessionUser,
    input: CheckoutRequestDto,
  ): Promise<CheckoutResult> {
    // Lower-case, as stored (the DTO's transform): the provider's metadata names the organization so too.
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
    const membership = organizationId
      ? await this.access.require(user, organizationId, 'admin')
      : null;
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
    if (membership) refuseFewerSeatsThanMembers(seats, membership);
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
    const { claim, givenUp } = await this.claim(
      {
        ...key,
        id,
        // Computed here from the plan row, never taken from the request; the CHECK keeps seats >= 1.
        amount: plan.priceAmount * seats,
        currency: plan.priceCurrency,
        interval,
      },
      now,
    );
    // Before the new session opens: the fewer sessions payable at once, the fewer double purchases.
    await this.expireAtProviders(givenUp);
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
        // No later than the row stops counting as pending (its createdAt is after `now`).
        expiresAt: new Date(now + CHECKOUT_REUSE_MS),
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

  /**
   * The claim of a new checkout, one short transaction. The pending checkouts of the buyer's plan and provider
   * are given up (expired) when they are stale, abandoned, or another order (another organization, or other
   * seats: a new click replaces them, and they are made unpayable at their provider too); with an
   * organization, under a transaction lock of its checkouts, so are its stale and abandoned ones of other
   * buyers, and the claim is refused while a subscription of it renews or while another checkout of it (another
   * buyer or provider) is pending, so two admins cannot both pay for the same organization. Then the new row is
   * inserted unless the same order is still pending (a double click).
   */
  private claim(
    checkout: NewCheckout,
    now: number,
  ): Promise<{ claim: CheckoutClaim; givenUp: PendingCheckout[] }> {
    const { organizationId } = checkout;
    const staleBefore = now - CHECKOUT_REUSE_MS;
    const abandonedBefore = now - CHECKOUT_ABANDONED_MS;
    const outdated = (row: PendingCheckout) =>
      row.createdAt.getTime() < staleBefore ||
      (row.url === null && row.createdAt.getTime() < abandonedBefore);
    const sameBuyer = (row: PendingCheckout) =>
      row.userId === checkout.userId &&
      row.planCode === checkout.planCode &&
      row.provider === checkout.provider;
    return this.billing.inTransaction(async (db) => {
      if (organizationId)
        await this.billing.lockCheckoutsOfOrganization(db, organizationId);
      const pending = await this.billing.findPendingCheckouts(
        db,
        checkout,
        organizationId,
      );
      const replaced = pending.filter(
        (row) =>
          outdated(row) ||
          (sameBuyer(row) &&
            (row.organizationId !== organizationId ||
              row.seats !== checkout.seats)),
      );
      const expired = new Set(
        await this.billing.expirePendingCheckouts(
          db,
          replaced.map((row) => row.id),
        ),
      );
      const givenUp = replaced.filter((row) => expired.has(row.id));
      if (organizationId) {
        const live = await this.billing.findLiveSubscriptionsOfOrganization(
          organizationId,
          db,
        );
        if (live.some(isRenewing))
          return { claim: 'organization_subscribed', givenUp };
        const otherOrder = pending.some(
          (row) =>
            !replaced.includes(row) &&
            row.organizationId === organizationId &&
            !sameBuyer(row),
        );
        if (otherOrder)
          return { claim: 'organization_checkout_pending', givenUp };
      }
      const inserted = await this.billing.insertPendingCheckout(db, checkout);
      return { claim: inserted ? 'claimed' : 'pending', givenUp };
    });
  }

  /**
   * Makes the given-up checkouts unpayable at their providers. A provider that cannot (a paid session, a Paddle
   * transaction still a draft) or cannot be reached is logged and left: should such a checkout still be paid
   * for an organization that has a renewing subscription by then, the webhook cancels the newcomer.
   */
  private async expireAtProviders(givenUp: PendingCheckout[]): Promise<void> {
    await Promise.all(
      givenUp.map(
        async ({ id, provider, providerSessionId, organizationId }) => {
          // Never opened at the provider (the request that claimed it died first): nothing to expire there.
          if (providerSessionId === null) return;
          const outcome = await this.gateways
            .get(provider)
            .expireCheckout(providerSessionId)
            .catch(() => null);
          if (outcome) return;
          const fields = {
            provider,
            checkout: id,
            session: providerSessionId,
            organization: organizationId,
          };
          const msg =
            outcome === false
              ? 'a given-up checkout stays payable at the provider (paid, or not cancelable yet)'
              : 'a given-up checkout could not be expired at the provider now';
          // An organization's is support's concern (a second subscription would be canceled, refunded by hand).
          if (organizationId) this.log.warn(fields, msg);
          else this.log.info(fields, msg);
        },
      ),
    );
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

/** Seats are what members use: a purchase never gives an organization fewer seats than it has members. */
function refuseFewerSeatsThanMembers(
  seats: number,
  membership: OrgMembership,
): void {
  const members = membership.organization._count.members;
  if (seats >= members) return;
  throw new AppError(
    'seats_exhausted',
    `The organization has ${members} members, so it needs at least ${members} seats: buy that many, or remove members first.`,
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
