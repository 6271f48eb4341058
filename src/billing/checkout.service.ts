import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { BillingRepository, CheckoutKey } from './billing.repository';
import { CheckoutRequestDto } from './dto/checkout.request';
import { CheckoutDto } from './dto/checkout.response';
import { PaymentGateways } from './providers/payment-gateways';
import { grantsPlan } from './subscription-state';

/** A pending checkout is offered again for this long; after it a click opens a new provider session. */
const CHECKOUT_REUSE_MS = 60 * 60 * 1000;
/** The provider call (10 s per attempt, one retry for Stripe) runs inside the checkout's transaction. */
const CHECKOUT_TRANSACTION_MS = 30_000;

export interface CheckoutResult {
  checkout: CheckoutDto;
  /** False when a pending checkout of the same plan and provider was handed back (a double click). */
  created: boolean;
}

@Injectable()
export class CheckoutService {
  constructor(
    private readonly billing: BillingRepository,
    private readonly gateways: PaymentGateways,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Opens a checkout of a plan. The price is the plan row's; every refusal happens before any provider call.
   * The pending row is inserted and held locked while the provider session is created, so a concurrent click
   * waits and then receives the same session instead of opening a second one.
   */
  async start(user: SessionUser, input: CheckoutRequestDto): Promise<CheckoutResult> {
    const plan = await this.billing.findActivePlan(input.planId);
    if (!plan) throw new AppError('not_found', `There is no plan '${input.planId}'; GET /v1/plans lists them.`);
    if (!plan.checkoutAllowed || plan.priceInterval === null || plan.priceAmount <= 0) {
      const detail = plan.priceInterval === null ? `The ${plan.name} plan is sold by contract: contact sales.` : `The ${plan.name} plan is free and needs no checkout.`;
      throw new AppError('plan_not_checkoutable', detail);
    }
    const gateway = this.gateways.get(input.provider);
    if (!gateway.canCheckout()) throw new AppError('provider_not_configured', `Checkout through ${input.provider} is not configured on this server.`);
    await this.refuseIfRenewing(user);

    const key: CheckoutKey = { userId: user.id, planCode: plan.code, provider: input.provider };
    const id = randomUUID();
    const interval = plan.priceInterval;
    return this.billing.inTransaction(async (db) => {
      await this.billing.expirePendingCheckout(db, key, new Date(this.clock.now().getTime() - CHECKOUT_REUSE_MS));
      const inserted = await this.billing.insertPendingCheckout(db, { ...key, id, amount: plan.priceAmount, currency: plan.priceCurrency, interval });
      if (!inserted) {
        const pending = await this.billing.lockPendingCheckout(db, key);
        if (!pending?.url) throw new AppError('conflict', 'Another checkout of this plan changed while this one started; try again.');
        return { checkout: { checkoutId: pending.id, provider: input.provider, url: pending.url }, created: false };
      }
      const session = await gateway.createCheckout({
        checkoutId: id,
        userId: user.id,
        email: user.email,
        plan: { code: plan.code, name: plan.name, amount: plan.priceAmount, currency: plan.priceCurrency, interval },
        successUrl: `${this.config.appUrl}/billing/success?checkoutId=${id}`,
        cancelUrl: `${this.config.appUrl}/billing/canceled?checkoutId=${id}`,
      });
      if (!(await this.billing.recordProviderSession(db, id, session.sessionId, session.url))) {
        throw new AppError('payment_provider_error', `${input.provider} answered a checkout that belongs to another purchase; nothing was charged. Try again.`);
      }
      return { checkout: { checkoutId: id, provider: input.provider, url: session.url }, created: true };
    }, CHECKOUT_TRANSACTION_MS);
  }

  /** A second subscription would bill twice; one that ends at period end may be replaced. */
  private async refuseIfRenewing(user: SessionUser): Promise<void> {
    const now = this.clock.now();
    const live = await this.billing.findLiveSubscriptionsOfUser(user.id);
    const renewing = live.find((subscription) => !subscription.cancelAtPeriodEnd && grantsPlan(subscription, now, this.config.billing.graceMs));
    if (renewing) {
      throw new AppError('subscription_exists', `You already have a renewing subscription to the ${renewing.planCode} plan; cancel it before buying another.`);
    }
  }
}
