import { Inject, Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Db } from '../infra/prisma/prisma.service';
import {
  BillingRepository,
  LockedOrganizationPlan,
  LockedSubscription,
} from './billing.repository';
import { SubscriptionDto } from './dto/subscription.response';
import { isLive, renewingRival } from './organization-subscriptions';
import { PaymentProviderName } from './providers/payment-gateway';
import {
  applySnapshot,
  grantEndsAt,
  grantsPlan,
  SubscriptionSnapshot,
  SubscriptionState,
} from './subscription-state';

export const FREE_PLAN = 'free';
/** An early event waits for its checkout's linking event this long after the checkout opened (Stripe sessions live 24 h). */
const EARLY_EVENT_WAIT_MS = 48 * 3600 * 1000;

type SubscriptionRef = Pick<
  LockedSubscription,
  'id' | 'userId' | 'organizationId'
>;

/**
 * Subscriptions and the plan they give. The user's plan is the best plan among their granting subscriptions;
 * it changes when one starts granting (a purchase) or when the one it comes from stops (canceled, lapsed past
 * grace: Free, or the next best). A plan set without a subscription (by an admin) is left alone by renewals.
 * A subscription bought for an organization gives its plan and seats to the organization instead (by the same
 * rules; lapsed: Free with no seats), never to the buyer, and every such change is in the audit log.
 * Only verified webhooks and the sweeper get here, inside their transactions.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly billing: BillingRepository,
    private readonly audit: AuditRepository,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  /**
   * Applies what one event says about a subscription. A subscription we do not know yet is created only when
   * the event names a checkout session we opened (never from metadata, which Paddle buyers can write), and a
   * checkout gives one subscription. Locks: subscription then user for a known one; user then insert for a
   * new one (the insert's foreign key would share-lock the user first and two new ones would deadlock), all
   * after a transaction lock on the provider's subscription id, so its events never race each other. An
   * organization's: subscription then organization; organization then insert.
   */
  async apply(
    db: Db,
    provider: PaymentProviderName,
    snapshot: SubscriptionSnapshot,
    occurredAt: Date,
  ): Promise<void> {
    await this.billing.lockSubscriptionKey(
      db,
      provider,
      snapshot.providerSubscriptionId,
    );
    const existing = await this.billing.lockSubscription(
      db,
      provider,
      snapshot.providerSubscriptionId,
    );
    if (existing)
      return this.update(db, provider, existing, snapshot, occurredAt);

    const checkout = snapshot.checkoutSessionId
      ? await this.billing.findCheckoutBySession(
          db,
          provider,
          snapshot.checkoutSessionId,
        )
      : null;
    if (!checkout) return this.refuseUnlinked(db, provider, snapshot);
    const { organizationId } = checkout;
    if (organizationId)
      await this.billing.lockOrganizationPlan(db, organizationId);
    else await this.billing.lockUserPlan(db, checkout.userId);
    const state = applySnapshot(null, snapshot, occurredAt)!;
    if (organizationId)
      await this.refuseSecondRenewing(
        db,
        provider,
        snapshot.providerSubscriptionId,
        organizationId,
        state.status,
        null,
      );
    const id = await this.billing.insertSubscription(db, {
      ...state,
      grantsUntil: grantEndsAt(state, this.config.billing.graceMs),
      checkoutId: checkout.id,
      userId: checkout.userId,
      planCode: checkout.planCode,
      provider,
      providerSubscriptionId: snapshot.providerSubscriptionId,
      organizationId,
      // The quantity the provider confirms; an event that does not tell it (a Paddle transaction) the order's.
      seats: snapshot.quantity ?? checkout.seats,
    });
    if (id) {
      const purchased = grantsPlan(
        state,
        this.clock.now(),
        this.config.billing.graceMs,
      );
      await this.settle(
        db,
        { id, userId: checkout.userId, organizationId },
        purchased,
        purchased,
      );
      return;
    }
    // The key lock rules out a concurrent insert of this subscription: the checkout already has another one.
    this.log.warn(
      {
        provider,
        subscription: snapshot.providerSubscriptionId,
        checkout: checkout.id,
      },
      'a second subscription for one checkout: ignored',
    );
  }

  /** The sweeper's step: the plan of a subscription whose grant ran out goes to the next best, or Free. */
  async releaseIfLapsed(db: Db, subscriptionId: string): Promise<boolean> {
    const subscription = await this.billing.lockSubscriptionById(
      db,
      subscriptionId,
    );
    if (!subscription) return false;
    if (
      grantsPlan(subscription, this.clock.now(), this.config.billing.graceMs)
    ) {
      // BILLING_GRACE_DAYS grew since the end was stored: store the new end instead.
      await this.billing.updateSubscriptionState(
        db,
        subscription.id,
        this.withGrantEnd(subscription),
      );
      return false;
    }
    return this.settle(db, subscription, false);
  }

  /** The user's granting subscription of this plan, if any: an admin setting that plan hands it back to billing. */
  async grantingSubscriptionOfPlan(
    db: Db,
    userId: string,
    planCode: string,
  ): Promise<string | null> {
    const granting = await this.billing.findGrantingSubscriptionsOfUser(
      userId,
      this.clock.now(),
      db,
    );
    return (
      granting.find((subscription) => subscription.planCode === planCode)?.id ??
      null
    );
  }

  async view(
    user: Pick<SessionUser, 'id' | 'planCode'>,
  ): Promise<SubscriptionDto> {
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

  /**
   * The webhook cancels a second renewing subscription of an organization at its provider before it applies the
   * event (docs/adr/0062-organizations.md). Two such purchases whose events race both pass that check; under the
   * organization's lock the second sees the first committed, and its event is refused (503) so that its
   * redelivery cancels it. Nothing is changed meanwhile.
   */
  private async refuseSecondRenewing(
    db: Db,
    provider: PaymentProviderName,
    providerSubscriptionId: string,
    organizationId: string,
    status: LockedSubscription['status'],
    storedStatus: LockedSubscription['status'] | null,
  ): Promise<void> {
    if (!isLive(status)) return;
    const rival = renewingRival(
      { provider, providerSubscriptionId, status, storedStatus },
      await this.billing.findLiveSubscriptionsOfOrganization(
        organizationId,
        db,
      ),
    );
    if (!rival) return;
    this.log.warn(
      {
        provider,
        subscription: providerSubscriptionId,
        organization: organizationId,
        renewing: rival.id,
      },
      'a second renewing subscription of an organization started concurrently: asked again, to be canceled',
    );
    throw new AppError(
      'webhook_not_processed',
      'Another subscription of this organization started at the same time; deliver the event again.',
      { headers: { 'Retry-After': '60' } },
    );
  }

  private async update(
    db: Db,
    provider: PaymentProviderName,
    existing: LockedSubscription,
    snapshot: SubscriptionSnapshot,
    occurredAt: Date,
  ): Promise<void> {
    const next = applySnapshot(existing, snapshot, occurredAt);
    if (!next) {
      this.log.info(
        { subscription: existing.id, status: existing.status, occurredAt },
        'stale or post-cancellation subscription event: ignored',
      );
      return;
    }
    if (
      existing.organizationId &&
      isLive(next.status) &&
      !isLive(existing.status)
    ) {
      // Subscription, then organization: the order every event of an organization's subscription locks in.
      await this.billing.lockOrganizationPlan(db, existing.organizationId);
      await this.refuseSecondRenewing(
        db,
        provider,
        snapshot.providerSubscriptionId,
        existing.organizationId,
        next.status,
        existing.status,
      );
    }
    await this.billing.updateSubscriptionState(db, existing.id, {
      ...this.withGrantEnd(next),
      // The pool follows the quantity the provider confirms, never the request that asked for it.
      ...(snapshot.quantity !== undefined ? { seats: snapshot.quantity } : {}),
    });
    const now = this.clock.now();
    const grace = this.config.billing.graceMs;
    const started =
      !grantsPlan(existing, now, grace) && grantsPlan(next, now, grace);
    // An incomplete subscription that starts granting is a purchase whose payment just went through.
    await this.settle(
      db,
      existing,
      started,
      started && existing.status === 'incomplete',
    );
  }

  private settle(
    db: Db,
    subscription: SubscriptionRef,
    started: boolean,
    purchased = false,
  ): Promise<boolean> {
    return subscription.organizationId
      ? this.settleOrganizationPlan(
          db,
          subscription.organizationId,
          started,
          purchased,
        )
      : this.settlePlan(db, subscription, started, purchased);
  }

  /**
   * The organization's plan and seats from its best granting subscription, or Free with no seats (its members
   * stay; the pool is gone), by the rules of settlePlan: an admin's plan stays unless `purchased`. A seat change
   * the provider confirmed reaches the organization here. Each change is audited with no actor (the provider's).
   * docs/adr/0062-organizations.md
   */
  private async settleOrganizationPlan(
    db: Db,
    organizationId: string,
    started: boolean,
    purchased: boolean,
  ): Promise<boolean> {
    const org = await this.billing.lockOrganizationPlan(db, organizationId);
    if (!org) {
      this.log.warn(
        { organization: organizationId },
        'subscription of an organization that no longer exists: nothing to grant',
      );
      return false;
    }
    const granting = await this.billing.findGrantingSubscriptionsOfOrganization(
      organizationId,
      this.clock.now(),
      db,
    );
    const best = granting[0] ?? null;
    if (
      started &&
      granting.filter((other) => !other.cancelAtPeriodEnd).length > 1
    ) {
      this.log.warn(
        {
          organization: organizationId,
          subscriptions: granting.map((other) => other.id),
        },
        'organization pays for more than one renewing subscription',
      );
    }
    if (org.planSetByAdmin && !purchased) return false;
    const mayChange =
      purchased ||
      org.planSubscriptionId !== null ||
      started ||
      (org.planCode === FREE_PLAN && best !== null);
    const next = best
      ? {
          planCode: best.planCode,
          seats: best.seats,
          planSubscriptionId: best.id,
        }
      : { planCode: FREE_PLAN, seats: 0, planSubscriptionId: null };
    const unchanged =
      org.planCode === next.planCode &&
      org.seats === next.seats &&
      org.planSubscriptionId === next.planSubscriptionId &&
      !org.planSetByAdmin;
    if (!mayChange || unchanged) return false;
    await this.billing.setOrganizationPlan(db, organizationId, next);
    await this.audit.record(db, {
      adminId: null,
      action: organizationPlanAction(org, next),
      targetType: 'organization',
      targetId: organizationId,
      before: {
        planCode: org.planCode,
        seats: org.seats,
        planSubscriptionId: org.planSubscriptionId,
        planSetByAdmin: org.planSetByAdmin,
      },
      after: { ...next, planSetByAdmin: false },
    });
    this.log.info(
      { organization: organizationId, ...next },
      'organization plan set from subscriptions',
    );
    return true;
  }

  /**
   * The organization's granting subscription of this plan with exactly these seats, if any: an admin setting
   * that plan and those seats hands the organization back to billing.
   */
  async grantingSubscriptionOfOrganization(
    db: Db,
    organizationId: string,
    planCode: string,
    seats: number,
  ): Promise<string | null> {
    const granting = await this.billing.findGrantingSubscriptionsOfOrganization(
      organizationId,
      this.clock.now(),
      db,
    );
    return (
      granting.find(
        (subscription) =>
          subscription.planCode === planCode && subscription.seats === seats,
      )?.id ?? null
    );
  }

  /** For a change of the organization's plan outside billing: its subscriptions' events queue behind it. */
  lockSubscriptionsOfOrganization(
    db: Db,
    organizationId: string,
  ): Promise<void> {
    return this.billing.lockSubscriptionKeysOfOrganization(db, organizationId);
  }

  /**
   * Sets the user's plan to their best granting subscription's, or Free, when the plan comes from a subscription,
   * fell to Free by the clock, or `started` (this subscription just began granting again). A plan an admin set
   * stays, unless `purchased`: a new purchase is a new decision by the user and replaces it.
   */
  private async settlePlan(
    db: Db,
    subscription: SubscriptionRef,
    started: boolean,
    purchased = false,
  ): Promise<boolean> {
    const user = await this.billing.lockUserPlan(db, subscription.userId);
    if (!user) return false;
    const granting = await this.billing.findGrantingSubscriptionsOfUser(
      subscription.userId,
      this.clock.now(),
      db,
    );
    const best = granting[0] ?? null;
    if (
      started &&
      granting.filter((other) => !other.cancelAtPeriodEnd).length > 1
    ) {
      this.log.warn(
        {
          user: subscription.userId,
          subscriptions: granting.map((other) => other.id),
        },
        'user pays for more than one renewing subscription',
      );
    }
    if (user.planSetByAdmin && !purchased) return false;
    const fromSubscription = user.planSubscriptionId !== null;
    const mayChange =
      purchased ||
      fromSubscription ||
      started ||
      (user.planCode === FREE_PLAN && best !== null);
    if (
      !mayChange ||
      (user.planSubscriptionId === (best?.id ?? null) && !user.planSetByAdmin)
    )
      return false;
    await this.billing.setUserPlan(
      db,
      subscription.userId,
      best?.planCode ?? FREE_PLAN,
      best?.id ?? null,
    );
    this.log.info(
      {
        user: subscription.userId,
        plan: best?.planCode ?? FREE_PLAN,
        subscription: best?.id ?? null,
      },
      'plan set from subscriptions',
    );
    return true;
  }

  /**
   * An event for a subscription we cannot link. If its metadata names one of our recent checkouts, opened at the
   * provider and still waiting for its subscription, the event came before the one that links them: 503, the
   * provider delivers it again later. Anything else (including a checkout given up, failed or older than two
   * days) was not bought through this service: acknowledged and ignored, so no retry loop lasts.
   */
  private async refuseUnlinked(
    db: Db,
    provider: PaymentProviderName,
    snapshot: SubscriptionSnapshot,
  ): Promise<void> {
    const hint = snapshot.checkoutHint;
    const openedAfter = new Date(
      this.clock.now().getTime() - EARLY_EVENT_WAIT_MS,
    );
    if (
      hint &&
      isUuid(hint) &&
      (await this.billing.isCheckoutAwaitingSubscription(
        db,
        provider,
        hint,
        openedAfter,
      ))
    ) {
      this.log.info(
        {
          provider,
          subscription: snapshot.providerSubscriptionId,
          checkout: hint,
        },
        'subscription event before its checkout event: asked again later',
      );
      throw new AppError(
        'webhook_not_processed',
        'This subscription is not linked to its checkout yet; deliver the event again later.',
        { headers: { 'Retry-After': '60' } },
      );
    }
    this.log.warn(
      { provider, subscription: snapshot.providerSubscriptionId },
      'event for a subscription not bought through this service: ignored',
    );
  }

  private withGrantEnd(
    state: SubscriptionState,
  ): SubscriptionState & { grantsUntil: Date | null } {
    return {
      ...state,
      grantsUntil: grantEndsAt(state, this.config.billing.graceMs),
    };
  }
}

/** The audit action of a plan change billing made: a grant, a lapse to Free, or a confirmed seat change. */
function organizationPlanAction(
  before: LockedOrganizationPlan,
  after: { planCode: string; planSubscriptionId: string | null },
): string {
  if (after.planSubscriptionId === null) return 'org.plan.lapse';
  const sameGrant =
    before.planCode === after.planCode &&
    before.planSubscriptionId === after.planSubscriptionId &&
    !before.planSetByAdmin;
  return sameGrant ? 'org.seats.change' : 'org.plan.grant';
}
