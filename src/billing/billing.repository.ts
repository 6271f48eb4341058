import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../infra/prisma/generated/client';
import { Db, PrismaService } from '../infra/prisma/prisma.service';
import { PaymentProviderName } from './providers/payment-gateway';
import { SubscriptionState } from './subscription-state';

/** One user's open checkout of one plan through one provider (at most one is pending: partial unique index). */
export interface CheckoutKey {
  userId: string;
  planCode: string;
  provider: PaymentProviderName;
}

export interface NewCheckout extends CheckoutKey {
  id: string;
  amount: number;
  currency: string;
  interval: 'month' | 'year';
}

export interface LockedSubscription extends SubscriptionState {
  id: string;
  userId: string;
  planCode: string;
}

export interface NewSubscription extends SubscriptionState {
  grantsUntil: Date | null;
  checkoutId: string;
  userId: string;
  planCode: string;
  provider: PaymentProviderName;
  providerSubscriptionId: string;
}

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
   * The claim of a new checkout, one short transaction: pending checkouts of the key that are too old are given
   * up (older than `staleBefore`, or still without a URL after `abandonedBefore`: the request that opened them
   * died), then the new row is inserted unless one is still pending. A concurrent claim of the same key waits for
   * this transaction and then finds its row. False when another checkout is pending.
   */
  claimCheckout(
    checkout: NewCheckout,
    staleBefore: Date,
    abandonedBefore: Date,
  ): Promise<boolean> {
    const { userId, planCode, provider } = checkout;
    return this.inTransaction(async (db) => {
      await db.checkout.updateMany({
        where: {
          userId,
          planCode,
          provider,
          status: 'pending',
          OR: [
            { createdAt: { lt: staleBefore } },
            { url: null, createdAt: { lt: abandonedBefore } },
          ],
        },
        data: { status: 'expired' },
      });
      const inserted = await db.$executeRaw`
        INSERT INTO "Checkout" (id, "userId", "planCode", provider, status, amount, currency, interval)
        VALUES (${checkout.id}::uuid, ${userId}::uuid, ${planCode}, ${provider}::"PaymentProvider", 'pending',
                ${checkout.amount}, ${checkout.currency}, ${checkout.interval}::"BillingInterval")
        ON CONFLICT DO NOTHING`;
      return inserted === 1;
    });
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
      select: { id: true, userId: true, planCode: true },
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
      select: { id: true, userId: true, planCode: true, ...SUBSCRIPTION_STATE },
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

  async updateSubscriptionState(
    db: Db,
    id: string,
    state: SubscriptionState & { grantsUntil: Date | null },
  ): Promise<void> {
    await db.subscription.update({
      where: { id },
      data: state,
      select: { id: true },
    });
  }

  /** The user's subscriptions that grant a plan at `now`, best plan first. */
  findGrantingSubscriptionsOfUser(
    userId: string,
    now: Date,
    db: Db = this.prisma,
  ) {
    return db.subscription.findMany({
      where: {
        userId,
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

  /** Plans held through a subscription that stopped granting them, the longest lapsed first. */
  findLapsedPlanGrants(now: Date, limit: number) {
    return this.prisma.subscription.findMany({
      where: { grantsUntil: { lte: now }, grantsPlanOf: { isNot: null } },
      orderBy: [{ grantsUntil: 'asc' }, { id: 'asc' }],
      select: { id: true, userId: true },
      take: limit,
    });
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
