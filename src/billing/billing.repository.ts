import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../infra/prisma/generated/client';
import { Db, PrismaService } from '../infra/prisma/prisma.service';
import { PaymentProviderName } from './providers/payment-gateway';
import { SubscriptionState, SubscriptionStatus } from './subscription-state';

/**
 * One user's open checkout of one plan through one provider (at most one is pending: partial unique index),
 * for one target: their own plan (organizationId null, 1 seat) or seats of an organization.
 */
export interface CheckoutKey {
  userId: string;
  planCode: string;
  provider: PaymentProviderName;
  organizationId: string | null;
  seats: number;
}

export interface NewCheckout extends CheckoutKey {
  id: string;
  /** The plan's price times the seats. */
  amount: number;
  currency: string;
  interval: 'month' | 'year';
}

/** A pending checkout, as a new claim weighs it (give it up, hand it back, or refuse because of it). */
export interface PendingCheckout {
  id: string;
  userId: string;
  planCode: string;
  provider: PaymentProviderName;
  organizationId: string | null;
  seats: number;
  url: string | null;
  providerSessionId: string | null;
  createdAt: Date;
}

/** An organization's subscription that still binds it, as checkout, seat changes and webhooks weigh it. */
export interface LiveOrganizationSubscription {
  id: string;
  provider: PaymentProviderName;
  providerSubscriptionId: string;
  seats: number;
  status: SubscriptionStatus;
  cancelAtPeriodEnd: boolean;
}

export interface LockedSubscription extends SubscriptionState {
  id: string;
  userId: string;
  planCode: string;
  /** The organization it pays for; null: the buyer's own plan. */
  organizationId: string | null;
  seats: number;
}

export interface NewSubscription extends SubscriptionState {
  grantsUntil: Date | null;
  checkoutId: string;
  userId: string;
  planCode: string;
  provider: PaymentProviderName;
  providerSubscriptionId: string;
  organizationId: string | null;
  seats: number;
}

/** What the organization's plan is now, as billing reads it under the organization's row lock. */
export interface LockedOrganizationPlan {
  planCode: string;
  seats: number;
  planSubscriptionId: string | null;
  planSetByAdmin: boolean;
}

/** Subscription states that still bind an organization: it pays, or may pay again (paused). */
export const LIVE_SUBSCRIPTION_STATUSES = [
  'active',
  'past_due',
  'paused',
] as const;

const SUBSCRIPTION_STATE = {
  status: true,
  currentPeriodEnd: true,
  cancelAtPeriodEnd: true,
  canceledAt: true,
  pastDueSince: true,
  providerCustomerId: true,
  lastEventAt: true,
} as const;

@Injectable()
export class BillingRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Billing transactions wait at most 10 s for a connection; checkout's include one provider call. */
  inTransaction<T>(
    work: (db: Db) => Promise<T>,
    timeoutMs = 15_000,
  ): Promise<T> {
    return this.prisma.$transaction(work, {
      maxWait: 10_000,
      timeout: timeoutMs,
    });
  }

  // --- plans and checkouts -----------------------------------------------------------------------------

  findActivePlan(code: string) {
    return this.prisma.plan.findFirst({
      where: { code, active: true },
      select: {
        code: true,
        name: true,
        priceAmount: true,
        priceCurrency: true,
        priceInterval: true,
        checkoutAllowed: true,
      },
    });
  }

  /**
   * Serialises the checkout claims of one organization for the transaction: what one claim finds pending or
   * live, the next one sees.
   */
  async lockCheckoutsOfOrganization(
    db: Db,
    organizationId: string,
  ): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`checkout:organization:${organizationId}`}::text, 0))`;
  }

  /**
   * The pending checkouts of one buyer's plan and provider (at most one: partial unique index) and, with an
   * organization, every pending checkout of that organization (any buyer, any provider).
   */
  findPendingCheckouts(
    db: Db,
    buyer: Pick<CheckoutKey, 'userId' | 'planCode' | 'provider'>,
    organizationId: string | null,
  ): Promise<PendingCheckout[]> {
    return db.checkout.findMany({
      where: {
        status: 'pending',
        OR: [
          {
            userId: buyer.userId,
            planCode: buyer.planCode,
            provider: buyer.provider,
          },
          ...(organizationId ? [{ organizationId }] : []),
        ],
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: {
        id: true,
        userId: true,
        planCode: true,
        provider: true,
        organizationId: true,
        seats: true,
        url: true,
        providerSessionId: true,
        createdAt: true,
      },
    });
  }

  /** Gives these checkouts up (expired) if they are still pending; answers the ids it gave up. */
  async expirePendingCheckouts(db: Db, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await db.$queryRaw<{ id: string }[]>`
      UPDATE "Checkout" SET status = 'expired'
       WHERE id = ANY(${ids}::uuid[]) AND status = 'pending'
      RETURNING id::text`;
    return rows.map((row) => row.id);
  }

  /**
   * Inserts the pending checkout; false when the buyer already has one pending of this plan and provider
   * (partial unique index: a concurrent insert of the same key waits for the other transaction, then skips).
   */
  async insertPendingCheckout(db: Db, checkout: NewCheckout): Promise<boolean> {
    const inserted = await db.$executeRaw`
      INSERT INTO "Checkout" (id, "userId", "planCode", provider, status, amount, currency, interval, "organizationId", seats)
      VALUES (${checkout.id}::uuid, ${checkout.userId}::uuid, ${checkout.planCode}, ${checkout.provider}::"PaymentProvider", 'pending',
              ${checkout.amount}, ${checkout.currency}, ${checkout.interval}::"BillingInterval",
              ${checkout.organizationId}::uuid, ${checkout.seats})
      ON CONFLICT DO NOTHING`;
    return inserted === 1;
  }

  findPendingCheckout(key: CheckoutKey) {
    return this.prisma.checkout.findFirst({
      where: { ...key, status: 'pending' },
      select: { id: true, url: true },
    });
  }

  async markCheckoutFailed(id: string): Promise<void> {
    await this.prisma.checkout.updateMany({
      where: { id, status: 'pending' },
      data: { status: 'failed' },
    });
  }

  /**
   * False when the provider answered a session id already recorded for another checkout (unique constraint).
   */
  async recordProviderSession(
    id: string,
    providerSessionId: string,
    url: string,
  ): Promise<boolean> {
    try {
      await this.prisma.checkout.update({
        where: { id },
        data: { providerSessionId, url },
        select: { id: true },
      });
      return true;
    } catch (error) {
      if (
        error instanceof Prisma.PrismaClientKnownRequestError &&
        error.code === 'P2002'
      )
        return false;
      throw error;
    }
  }

  /** NO KEY UPDATE: it must not block the foreign-key check of a subscription being inserted for this checkout. */
  async lockCheckoutBySession(
    db: Db,
    provider: PaymentProviderName,
    providerSessionId: string,
  ) {
    const [row] = await db.$queryRaw<
      { id: string; userId: string; planCode: string; status: string }[]
    >`
      SELECT id::text, "userId"::text, "planCode", status::text FROM "Checkout"
      WHERE provider = ${provider}::"PaymentProvider" AND "providerSessionId" = ${providerSessionId}
      FOR NO KEY UPDATE`;
    return row ?? null;
  }

  async markCheckoutCompleted(db: Db, id: string, at: Date): Promise<void> {
    await db.checkout.updateMany({
      where: { id, status: { not: 'completed' } },
      data: { status: 'completed', completedAt: at },
    });
  }

  async markCheckoutExpired(
    db: Db,
    provider: PaymentProviderName,
    providerSessionId: string,
  ): Promise<void> {
    await db.checkout.updateMany({
      where: { provider, providerSessionId, status: 'pending' },
      data: { status: 'expired' },
    });
  }

  /** The checkout a provider session (Stripe Checkout Session, Paddle transaction) belongs to: who bought what. */
  async findCheckoutBySession(
    db: Db,
    provider: PaymentProviderName,
    providerSessionId: string,
  ) {
    return db.checkout.findUnique({
      where: { provider_providerSessionId: { provider, providerSessionId } },
      select: {
        id: true,
        userId: true,
        planCode: true,
        organizationId: true,
        seats: true,
      },
    });
  }

  /**
   * Whether this is one of our recent checkouts through that provider, opened at the provider and still
   * without its subscription: the only kind an early event may be asked to wait for.
   */
  async isCheckoutAwaitingSubscription(
    db: Db,
    provider: PaymentProviderName,
    checkoutId: string,
    openedAfter: Date,
  ): Promise<boolean> {
    const row = await db.checkout.findFirst({
      where: {
        id: checkoutId,
        provider,
        status: { in: ['pending', 'completed'] },
        providerSessionId: { not: null },
        createdAt: { gt: openedAfter },
        subscription: null,
      },
      select: { id: true },
    });
    return row !== null;
  }

  // --- webhook events -------------------------------------------------------------------------------------

  /**
   * Whether the buyer of this provider subscription (known by it, or by the checkout session that bought
   * it) erased the account: such a subscription must not keep billing anyone.
   */
  async isBoughtByErasedAccount(
    provider: PaymentProviderName,
    providerSubscriptionId: string,
    checkoutSessionId: string | null,
  ): Promise<boolean> {
    const rows = await this.prisma.$queryRaw<{ erased: number }[]>`
      SELECT 1 AS erased FROM "User" u
      WHERE u."deletedAt" IS NOT NULL AND (
        u.id IN (SELECT s."userId" FROM "Subscription" s
                  WHERE s.provider = ${provider}::"PaymentProvider"
                    AND s."providerSubscriptionId" = ${providerSubscriptionId})
        OR u.id IN (SELECT c."userId" FROM "Checkout" c
                     WHERE c.provider = ${provider}::"PaymentProvider"
                       AND c."providerSessionId" = ${checkoutSessionId}))
      LIMIT 1`;
    return rows.length > 0;
  }

  /**
   * Whether this provider subscription (known by it, or by the checkout session that bought it) pays for an
   * organization that no longer exists (deleted while its checkout was open): it must not keep billing.
   */
  async isForMissingOrganization(
    provider: PaymentProviderName,
    providerSubscriptionId: string,
    checkoutSessionId: string | null,
  ): Promise<boolean> {
    const rows = await this.prisma.$queryRaw<{ missing: number }[]>`
      SELECT 1 AS missing FROM (
        SELECT s."organizationId" FROM "Subscription" s
         WHERE s.provider = ${provider}::"PaymentProvider"
           AND s."providerSubscriptionId" = ${providerSubscriptionId}
        UNION ALL
        SELECT c."organizationId" FROM "Checkout" c
         WHERE c.provider = ${provider}::"PaymentProvider"
           AND c."providerSessionId" = ${checkoutSessionId}) bought
      WHERE bought."organizationId" IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM "Organization" o WHERE o.id = bought."organizationId")
      LIMIT 1`;
    return rows.length > 0;
  }

  /**
   * The organization a provider subscription pays for, found by the subscription when we have it (with its
   * stored status), else by the checkout session that bought it (status null: not stored yet). Null for a
   * personal purchase or one we cannot link.
   */
  async findOrganizationPurchase(
    provider: PaymentProviderName,
    providerSubscriptionId: string,
    checkoutSessionId: string | null,
  ): Promise<{
    organizationId: string;
    status: SubscriptionStatus | null;
  } | null> {
    const known = await this.prisma.subscription.findUnique({
      where: {
        provider_providerSubscriptionId: { provider, providerSubscriptionId },
      },
      select: { organizationId: true, status: true },
    });
    if (known)
      return known.organizationId
        ? { organizationId: known.organizationId, status: known.status }
        : null;
    if (!checkoutSessionId) return null;
    const checkout = await this.prisma.checkout.findUnique({
      where: {
        provider_providerSessionId: {
          provider,
          providerSessionId: checkoutSessionId,
        },
      },
      select: { organizationId: true },
    });
    return checkout?.organizationId
      ? { organizationId: checkout.organizationId, status: null }
      : null;
  }

  async isEventRecorded(
    provider: PaymentProviderName,
    eventId: string,
  ): Promise<boolean> {
    const row = await this.prisma.webhookEvent.findUnique({
      where: { provider_eventId: { provider, eventId } },
      select: { id: true },
    });
    return row !== null;
  }

  /** Records the event once: false when it already was (a concurrent delivery waits here for the first). */
  async recordEvent(
    db: Db,
    event: {
      provider: PaymentProviderName;
      eventId: string;
      type: string;
      occurredAt: Date;
    },
  ): Promise<boolean> {
    const result = await db.webhookEvent.createMany({
      data: [event],
      skipDuplicates: true,
    });
    return result.count === 1;
  }

  // --- subscriptions ---------------------------------------------------------------------------------------

  /**
   * Serialises every event of one provider subscription, known or not yet inserted, for the transaction:
   * without it two events of a new subscription race to insert it and then lock in different orders.
   */
  async lockSubscriptionKey(
    db: Db,
    provider: PaymentProviderName,
    providerSubscriptionId: string,
  ): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${subscriptionLockKey(provider, providerSubscriptionId)}::text, 0))`;
  }

  async lockSubscription(
    db: Db,
    provider: PaymentProviderName,
    providerSubscriptionId: string,
  ): Promise<LockedSubscription | null> {
    const [row] = await db.$queryRaw<{ id: string }[]>`
      SELECT id::text FROM "Subscription"
      WHERE provider = ${provider}::"PaymentProvider" AND "providerSubscriptionId" = ${providerSubscriptionId}
      FOR UPDATE`;
    return row ? this.findLockedSubscription(db, row.id) : null;
  }

  async lockSubscriptionById(
    db: Db,
    id: string,
  ): Promise<LockedSubscription | null> {
    const [row] = await db.$queryRaw<
      { id: string }[]
    >`SELECT id::text FROM "Subscription" WHERE id = ${id}::uuid FOR UPDATE`;
    return row ? this.findLockedSubscription(db, row.id) : null;
  }

  private findLockedSubscription(
    db: Db,
    id: string,
  ): Promise<LockedSubscription | null> {
    return db.subscription.findUnique({
      where: { id },
      select: {
        id: true,
        userId: true,
        planCode: true,
        organizationId: true,
        seats: true,
        ...SUBSCRIPTION_STATE,
      },
    });
  }

  /** Inserts the subscription unless the provider's id or the checkout is taken; answers the new row's id, or null. */
  async insertSubscription(
    db: Db,
    subscription: NewSubscription,
  ): Promise<string | null> {
    const id = randomUUID();
    const result = await db.subscription.createMany({
      data: [{ id, ...subscription }],
      skipDuplicates: true,
    });
    return result.count === 1 ? id : null;
  }

  /** The new state, and the quantity the provider confirmed with it (`seats`, when the event told it). */
  async updateSubscriptionState(
    db: Db,
    id: string,
    state: SubscriptionState & { grantsUntil: Date | null; seats?: number },
  ): Promise<void> {
    await db.subscription.update({
      where: { id },
      data: state,
      select: { id: true },
    });
  }

  /** The user's own subscriptions (not an organization's) that grant a plan at `now`, best plan first. */
  findGrantingSubscriptionsOfUser(
    userId: string,
    now: Date,
    db: Db = this.prisma,
  ) {
    return db.subscription.findMany({
      where: {
        userId,
        organizationId: null,
        OR: [{ grantsUntil: null }, { grantsUntil: { gt: now } }],
      },
      orderBy: [{ plan: { sortOrder: 'desc' } }, { createdAt: 'desc' }],
      select: { id: true, planCode: true, cancelAtPeriodEnd: true },
    });
  }

  // --- the user's plan -------------------------------------------------------------------------------------

  /** Taken before a subscription of the user is inserted: the insert's foreign key would otherwise share-lock the row first. */
  async lockUserPlan(
    db: Db,
    userId: string,
  ): Promise<{
    planCode: string;
    planSubscriptionId: string | null;
    planSetByAdmin: boolean;
  } | null> {
    const [row] = await db.$queryRaw<
      {
        planCode: string;
        planSubscriptionId: string | null;
        planSetByAdmin: boolean;
      }[]
    >`
      SELECT "planCode", "planSubscriptionId"::text AS "planSubscriptionId", "planSetByAdmin" FROM "User" WHERE id = ${userId}::uuid FOR UPDATE`;
    return row ?? null;
  }

  /** The plan billing decides: from this subscription, or Free (null); an admin's earlier choice no longer holds. */
  async setUserPlan(
    db: Db,
    userId: string,
    planCode: string,
    planSubscriptionId: string | null,
  ): Promise<void> {
    await db.user.update({
      where: { id: userId },
      data: { planCode, planSubscriptionId, planSetByAdmin: false },
      select: { id: true },
    });
  }

  /** Plans (of users and organizations) held through a subscription that stopped granting them, the longest lapsed first. */
  findLapsedPlanGrants(now: Date, limit: number) {
    return this.prisma.subscription.findMany({
      where: {
        grantsUntil: { lte: now },
        OR: [
          { grantsPlanOf: { isNot: null } },
          { grantsPlanOfOrg: { isNot: null } },
        ],
      },
      orderBy: [{ grantsUntil: 'asc' }, { id: 'asc' }],
      select: { id: true, userId: true, organizationId: true },
      take: limit,
    });
  }

  // --- an organization's plan and seats ------------------------------------------------------------------

  /**
   * Taken after the subscription's locks and before a subscription of the organization is inserted. NO KEY
   * UPDATE: the pool's usage rows and new members only key-share it. Null when the organization is gone.
   */
  async lockOrganizationPlan(
    db: Db,
    organizationId: string,
  ): Promise<LockedOrganizationPlan | null> {
    const [row] = await db.$queryRaw<LockedOrganizationPlan[]>`
      SELECT "planCode", seats, "planSubscriptionId"::text AS "planSubscriptionId", "planSetByAdmin"
        FROM "Organization" WHERE id = ${organizationId}::uuid FOR NO KEY UPDATE`;
    return row ?? null;
  }

  /** The organization's subscriptions that grant a plan at `now`, best plan first, then the newest. */
  findGrantingSubscriptionsOfOrganization(
    organizationId: string,
    now: Date,
    db: Db = this.prisma,
  ) {
    return db.subscription.findMany({
      where: {
        organizationId,
        OR: [{ grantsUntil: null }, { grantsUntil: { gt: now } }],
      },
      orderBy: [{ plan: { sortOrder: 'desc' } }, { createdAt: 'desc' }],
      select: {
        id: true,
        planCode: true,
        seats: true,
        cancelAtPeriodEnd: true,
      },
    });
  }

  /** The plan and seats billing decides: from this subscription, or Free with no seats (null). */
  async setOrganizationPlan(
    db: Db,
    organizationId: string,
    plan: {
      planCode: string;
      seats: number;
      planSubscriptionId: string | null;
    },
  ): Promise<void> {
    await db.organization.update({
      where: { id: organizationId },
      data: { ...plan, planSetByAdmin: false },
      select: { id: true },
    });
  }

  /** The organization's live subscriptions (they pay, or may pay again), newest first. */
  findLiveSubscriptionsOfOrganization(
    organizationId: string,
    db: Db = this.prisma,
  ): Promise<LiveOrganizationSubscription[]> {
    return db.subscription.findMany({
      where: {
        organizationId,
        status: { in: [...LIVE_SUBSCRIPTION_STATUSES] },
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: {
        id: true,
        provider: true,
        providerSubscriptionId: true,
        seats: true,
        status: true,
        cancelAtPeriodEnd: true,
      },
    });
  }

  /**
   * Takes the transaction lock of every subscription of the organization, in a stable order, as webhooks take
   * it first: a change that then locks the organization queues behind their events instead of deadlocking.
   */
  async lockSubscriptionKeysOfOrganization(
    db: Db,
    organizationId: string,
  ): Promise<void> {
    const subscriptions = await db.subscription.findMany({
      where: { organizationId },
      orderBy: { id: 'asc' },
      select: { provider: true, providerSubscriptionId: true },
    });
    for (const subscription of subscriptions)
      await this.lockSubscriptionKey(
        db,
        subscription.provider,
        subscription.providerSubscriptionId,
      );
  }

  // --- the caller's view ---------------------------------------------------------------------------------

  /** The caller's plan with the subscription granting it, else their most recent subscription. */
  findSubscriptionView(userId: string) {
    const subscription = {
      select: {
        provider: true,
        status: true,
        currentPeriodEnd: true,
        cancelAtPeriodEnd: true,
      },
    } as const;
    return this.prisma.user.findUnique({
      where: { id: userId },
      select: {
        plan: { select: { code: true, name: true } },
        planSubscription: subscription,
        subscriptions: {
          ...subscription,
          where: { organizationId: null },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: 1,
        },
      },
    });
  }
}

/** The transaction lock every change of one provider subscription takes first (account erasure takes it too). */
export function subscriptionLockKey(
  provider: PaymentProviderName,
  providerSubscriptionId: string,
): string {
  return `subscription:${provider}:${providerSubscriptionId}`;
}
