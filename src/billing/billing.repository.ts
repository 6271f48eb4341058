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
  inTransaction<T>(work: (db: Db) => Promise<T>, timeoutMs = 15_000): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: timeoutMs });
  }

  // --- plans and checkouts -----------------------------------------------------------------------------

  findActivePlan(code: string) {
    return this.prisma.plan.findFirst({
      where: { code, active: true },
      select: { code: true, name: true, priceAmount: true, priceCurrency: true, priceInterval: true, checkoutAllowed: true },
    });
  }

  /** Pending checkouts older than `before` are given up (the provider's session may still be paid: see completion). */
  async expirePendingCheckout(db: Db, key: CheckoutKey, before: Date): Promise<void> {
    await db.checkout.updateMany({ where: { ...key, status: 'pending', createdAt: { lt: before } }, data: { status: 'expired' } });
  }

  /**
   * Inserts the pending checkout unless one is pending for the same key. A concurrent insert of the same key
   * waits for the first transaction: it sees its row once committed, or inserts its own if it rolled back.
   */
  async insertPendingCheckout(db: Db, checkout: NewCheckout): Promise<boolean> {
    const inserted = await db.$executeRaw`
      INSERT INTO "Checkout" (id, "userId", "planCode", provider, status, amount, currency, interval)
      VALUES (${checkout.id}::uuid, ${checkout.userId}::uuid, ${checkout.planCode}, ${checkout.provider}::"PaymentProvider", 'pending',
              ${checkout.amount}, ${checkout.currency}, ${checkout.interval}::"BillingInterval")
      ON CONFLICT DO NOTHING`;
    return inserted === 1;
  }

  async lockPendingCheckout(db: Db, key: CheckoutKey): Promise<{ id: string; url: string | null } | null> {
    const [row] = await db.$queryRaw<{ id: string; url: string | null }[]>`
      SELECT id::text, url FROM "Checkout"
      WHERE "userId" = ${key.userId}::uuid AND "planCode" = ${key.planCode} AND provider = ${key.provider}::"PaymentProvider" AND status = 'pending'
      FOR UPDATE`;
    return row ?? null;
  }

  /**
   * False when the provider answered a session id already recorded for another checkout (unique constraint);
   * the statement's failure aborts the transaction, which the caller then rolls back.
   */
  async recordProviderSession(db: Db, id: string, providerSessionId: string, url: string): Promise<boolean> {
    try {
      await db.checkout.update({ where: { id }, data: { providerSessionId, url }, select: { id: true } });
      return true;
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') return false;
      throw error;
    }
  }

  async lockCheckoutBySession(db: Db, provider: PaymentProviderName, providerSessionId: string) {
    const [row] = await db.$queryRaw<{ id: string; userId: string; planCode: string; status: string }[]>`
      SELECT id::text, "userId"::text, "planCode", status::text FROM "Checkout"
      WHERE provider = ${provider}::"PaymentProvider" AND "providerSessionId" = ${providerSessionId}
      FOR UPDATE`;
    return row ?? null;
  }

  async markCheckoutCompleted(db: Db, id: string, at: Date): Promise<void> {
    await db.checkout.updateMany({ where: { id, status: { not: 'completed' } }, data: { status: 'completed', completedAt: at } });
  }

  async markCheckoutExpired(db: Db, provider: PaymentProviderName, providerSessionId: string): Promise<void> {
    await db.checkout.updateMany({ where: { provider, providerSessionId, status: 'pending' }, data: { status: 'expired' } });
  }

  /** Who bought through this checkout: the provider echoes our id back in the subscription's metadata. */
  findCheckoutBuyer(db: Db, provider: PaymentProviderName, checkoutId: string) {
    return db.checkout.findFirst({ where: { id: checkoutId, provider }, select: { id: true, userId: true, planCode: true } });
  }

  // --- webhook events -------------------------------------------------------------------------------------

  async isEventRecorded(provider: PaymentProviderName, eventId: string): Promise<boolean> {
    const row = await this.prisma.webhookEvent.findUnique({ where: { provider_eventId: { provider, eventId } }, select: { id: true } });
    return row !== null;
  }

  /** Records the event once: false when it already was (a concurrent delivery waits here for the first). */
  async recordEvent(db: Db, event: { provider: PaymentProviderName; eventId: string; type: string; occurredAt: Date }): Promise<boolean> {
    const result = await db.webhookEvent.createMany({ data: [event], skipDuplicates: true });
    return result.count === 1;
  }

  // --- subscriptions ---------------------------------------------------------------------------------------

  async lockSubscription(db: Db, provider: PaymentProviderName, providerSubscriptionId: string): Promise<LockedSubscription | null> {
    const [row] = await db.$queryRaw<{ id: string }[]>`
      SELECT id::text FROM "Subscription"
      WHERE provider = ${provider}::"PaymentProvider" AND "providerSubscriptionId" = ${providerSubscriptionId}
      FOR UPDATE`;
    return row ? this.findLockedSubscription(db, row.id) : null;
  }

  async lockSubscriptionById(db: Db, id: string): Promise<LockedSubscription | null> {
    const [row] = await db.$queryRaw<{ id: string }[]>`SELECT id::text FROM "Subscription" WHERE id = ${id}::uuid FOR UPDATE`;
    return row ? this.findLockedSubscription(db, row.id) : null;
  }

  private findLockedSubscription(db: Db, id: string): Promise<LockedSubscription | null> {
    return db.subscription.findUnique({ where: { id }, select: { id: true, userId: true, planCode: true, ...SUBSCRIPTION_STATE } });
  }

  /** Inserts the subscription unless the provider's id is known; answers the new row's id, or null. */
  async insertSubscription(db: Db, subscription: NewSubscription): Promise<string | null> {
    const id = randomUUID();
    const result = await db.subscription.createMany({ data: [{ id, ...subscription }], skipDuplicates: true });
    return result.count === 1 ? id : null;
  }

  async updateSubscriptionState(db: Db, id: string, state: SubscriptionState): Promise<void> {
    await db.subscription.update({ where: { id }, data: state, select: { id: true } });
  }

  /** The user's subscriptions that may still grant a plan, best plan first (the caller checks their dates). */
  findLiveSubscriptionsOfUser(userId: string, db: Db = this.prisma) {
    return db.subscription.findMany({
      where: { userId, status: { in: ['active', 'past_due'] } },
      orderBy: [{ plan: { sortOrder: 'desc' } }, { createdAt: 'desc' }],
      select: { id: true, planCode: true, status: true, currentPeriodEnd: true, cancelAtPeriodEnd: true, pastDueSince: true },
    });
  }

  // --- the user's plan -------------------------------------------------------------------------------------

  async lockUserPlan(db: Db, userId: string): Promise<{ planCode: string; planSubscriptionId: string | null } | null> {
    const [row] = await db.$queryRaw<{ planCode: string; planSubscriptionId: string | null }[]>`
      SELECT "planCode", "planSubscriptionId"::text AS "planSubscriptionId" FROM "User" WHERE id = ${userId}::uuid FOR UPDATE`;
    return row ?? null;
  }

  async setUserPlan(db: Db, userId: string, planCode: string, planSubscriptionId: string | null): Promise<void> {
    await db.user.update({ where: { id: userId }, data: { planCode, planSubscriptionId }, select: { id: true } });
  }

  /**
   * Plans held through a subscription that may have stopped granting them: not active (past due ones run out
   * of grace), or past their period end. The sweeper checks each one exactly (grace included) under the subscription's lock.
   */
  findPlanGrantsToCheck(now: Date, limit: number) {
    return this.prisma.user.findMany({
      where: {
        planSubscription: { OR: [{ status: { not: 'active' } }, { currentPeriodEnd: { lt: now } }] },
      },
      select: { id: true, planSubscriptionId: true },
      take: limit,
    });
  }

  // --- the caller's view ---------------------------------------------------------------------------------

  /** The caller's plan with the subscription granting it, else their most recent subscription. */
  findSubscriptionView(userId: string) {
    const subscription = { select: { provider: true, status: true, currentPeriodEnd: true, cancelAtPeriodEnd: true } } as const;
    return this.prisma.user.findUnique({
      where: { id: userId },
      select: {
        plan: { select: { code: true, name: true } },
        planSubscription: subscription,
        subscriptions: { ...subscription, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 1 },
      },
    });
  }
}

