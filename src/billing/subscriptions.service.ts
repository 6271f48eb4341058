import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { isUuid } from '../common/ids';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Db } from '../infra/prisma/prisma.service';
import { BillingRepository, LockedSubscription } from './billing.repository';
import { SubscriptionDto } from './dto/subscription.response';
import { PaymentProviderName } from './providers/payment-gateway';
import { applySnapshot, grantsPlan, SubscriptionSnapshot } from './subscription-state';

export const FREE_PLAN = 'free';

/**
 * Subscriptions and the plan they give. A subscription that starts granting its plan becomes the user's plan
 * at once; when the one the user's plan comes from stops granting it (canceled, lapsed past grace), the user
 * falls back to another granting subscription or to Free. Only verified webhooks and the sweeper get here.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly billing: BillingRepository,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  /**
   * Applies what one event says about a subscription, inside the event's transaction. Lock order is the
   * subscription row, then the user row (the sweeper takes them in the same order).
   */
  async apply(db: Db, provider: PaymentProviderName, snapshot: SubscriptionSnapshot, occurredAt: Date): Promise<void> {
    const existing = await this.billing.lockSubscription(db, provider, snapshot.providerSubscriptionId);
    if (existing) return this.update(db, existing, snapshot, occurredAt);

    const buyer = snapshot.checkoutId && isUuid(snapshot.checkoutId) ? await this.billing.findCheckoutBuyer(db, provider, snapshot.checkoutId) : null;
    if (!buyer) {
      this.log.warn({ provider, subscription: snapshot.providerSubscriptionId }, 'subscription event for a subscription not bought through this service: ignored');
      return;
    }
    const state = applySnapshot(null, snapshot, occurredAt)!;
    const id = await this.billing.insertSubscription(db, {
      ...state,
      userId: buyer.userId,
      planCode: buyer.planCode,
      provider,
      providerSubscriptionId: snapshot.providerSubscriptionId,
    });
    if (id) return this.settlePlan(db, { id, userId: buyer.userId, planCode: buyer.planCode }, false, grantsPlan(state, this.clock.now(), this.config.billing.graceMs));
    // Another delivery inserted it first and has committed by now: apply this one on top.
    const inserted = await this.billing.lockSubscription(db, provider, snapshot.providerSubscriptionId);
    if (inserted) await this.update(db, inserted, snapshot, occurredAt);
  }

  /** Gives the plan up if the subscription it comes from no longer grants it (the sweeper's step). */
  async releaseIfLapsed(db: Db, subscriptionId: string): Promise<boolean> {
    const subscription = await this.billing.lockSubscriptionById(db, subscriptionId);
    if (!subscription || grantsPlan(subscription, this.clock.now(), this.config.billing.graceMs)) return false;
    return this.release(db, subscription);
  }

  async view(user: SessionUser): Promise<SubscriptionDto> {
    const row = await this.billing.findSubscriptionView(user.id);
    const subscription = row?.planSubscription ?? row?.subscriptions[0] ?? null;
    return {
      plan: row ? row.plan : { code: user.planCode, name: user.planCode },
      status: subscription?.status ?? 'none',
      provider: subscription?.provider ?? null,
      currentPeriodEnd: subscription?.currentPeriodEnd?.toISOString() ?? null,
      cancelAtPeriodEnd: subscription?.cancelAtPeriodEnd ?? false,
    };
  }

  private async update(db: Db, existing: LockedSubscription, snapshot: SubscriptionSnapshot, occurredAt: Date): Promise<void> {
    const next = applySnapshot(existing, snapshot, occurredAt);
    if (!next) {
      this.log.info({ subscription: existing.id, status: existing.status, occurredAt }, 'stale or post-cancellation subscription event: ignored');
      return;
    }
    await this.billing.updateSubscriptionState(db, existing.id, next);
    const now = this.clock.now();
    const grace = this.config.billing.graceMs;
    await this.settlePlan(db, existing, grantsPlan(existing, now, grace), grantsPlan(next, now, grace));
  }

  /**
   * A subscription that starts granting takes over the user's plan; one that keeps granting only takes back
   * a plan it lost to the clock (the user fell to Free), so a plan an admin set stays. One that stops
   * granting gives the plan up.
   */
  private async settlePlan(db: Db, subscription: Pick<LockedSubscription, 'id' | 'userId' | 'planCode'>, granted: boolean, grants: boolean): Promise<void> {
    if (!grants) {
      await this.release(db, subscription);
      return;
    }
    const user = await this.billing.lockUserPlan(db, subscription.userId);
    if (!user || user.planSubscriptionId === subscription.id) return;
    const fellToFree = user.planSubscriptionId === null && user.planCode === FREE_PLAN;
    if (granted && !fellToFree) return;
    await this.billing.setUserPlan(db, subscription.userId, subscription.planCode, subscription.id);
    this.log.info({ user: subscription.userId, plan: subscription.planCode, subscription: subscription.id }, 'plan activated by subscription');
  }

  /** If the user's plan comes from this subscription: the best other granting subscription, else Free. */
  private async release(db: Db, subscription: Pick<LockedSubscription, 'id' | 'userId'>): Promise<boolean> {
    const user = await this.billing.lockUserPlan(db, subscription.userId);
    if (user?.planSubscriptionId !== subscription.id) return false;
    const now = this.clock.now();
    const others = await this.billing.findLiveSubscriptionsOfUser(subscription.userId, db);
    const next = others.find((other) => other.id !== subscription.id && grantsPlan(other, now, this.config.billing.graceMs));
    await this.billing.setUserPlan(db, subscription.userId, next?.planCode ?? FREE_PLAN, next?.id ?? null);
    this.log.info({ user: subscription.userId, from: subscription.id, plan: next?.planCode ?? FREE_PLAN }, 'plan released by subscription');
    return true;
  }
}
