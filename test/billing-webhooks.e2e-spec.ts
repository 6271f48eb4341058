import { randomUUID } from 'node:crypto';
import { BillingSweeperService } from '../src/billing/billing-sweeper.service';
import { Clock } from '../src/common/clock';
import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import {
  paddleEvent,
  paddleSignature,
  paddleSubscription,
  paddleTransaction,
  stripeCheckoutSession,
  stripeEvent,
  stripeSignature,
  stripeSubscription,
} from './support/billing-events';
import {
  billingEnv,
  dailyCreditsOf,
  deliver,
  inDays,
  planOf,
  providerSessionOf,
  seconds,
} from './support/billing';
import { registerUser } from './support/factories';
import { sql as sqlOn } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;

/**
 * On a database of its own: the sweeps below move the clock months ahead, and a sweep releases every lapsed
 * plan in its database, other suites' users included.
 */
describe('payment webhooks', () => {
  let database: ScratchDatabase;
  let t: TestApp;
  let stripe: FakeStripe;
  let paddle: FakePaddle;
  let freeCredits: number;
  let proCredits: number;

  beforeAll(async () => {
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    database = await createMigratedDatabase('chat_billing_webhooks');
    t = await bootTestApp({
      ...billingEnv(stripe, paddle),
      DATABASE_URL: database.url,
    });
    freeCredits = await dailyCreditsOf('free', database.url);
    proCredits = await dailyCreditsOf('pro', database.url);
  });
  afterAll(async () => {
    await t.close();
    await stripe.close();
    await paddle.close();
    await database.drop();
  });
  afterEach(() => jest.restoreAllMocks());

  const sql = <T = Record<string, unknown>>(
    query: string,
    values: unknown[] = [],
  ) => sqlOn<T>(query, values, database.url);

  const quotaLimit = async (user: User) =>
    (
      await t.http
        .get('/v1/billing/quota')
        .set('Cookie', user.cookie)
        .expect(200)
    ).body.limit as number;
  const subscriptionOf = async (user: User) =>
    (
      await t.http
        .get('/v1/billing/subscription')
        .set('Cookie', user.cookie)
        .expect(200)
    ).body;
  const eventRows = (eventId: string) =>
    sql('SELECT 1 FROM "WebhookEvent" WHERE "eventId" = $1', [eventId]);
  const eventIdOf = (payload: string) => {
    const parsed = JSON.parse(payload) as { id?: string; event_id?: string };
    return (parsed.id ?? parsed.event_id)!;
  };
  const appliedLogs = (eventId: string) =>
    t.logs.filter(
      (line) => line.msg === 'webhook applied' && line.eventId === eventId,
    );

  /** Moves the service's clock (plans end by it) and runs the sweeper as its timer would. */
  async function sweepAt(when: Date): Promise<string[]> {
    jest.spyOn(t.app.get(Clock), 'now').mockReturnValue(when);
    return t.app.get(BillingSweeperService).sweep();
  }

  async function startCheckout(
    user: User,
    provider: 'stripe' | 'paddle',
    planId = 'pro',
  ) {
    const res = await t.http
      .post('/v1/billing/checkout')
      .set('Cookie', user.cookie)
      .send({ planId, provider })
      .expect(201);
    return {
      checkoutId: res.body.checkoutId as string,
      sessionId: await providerSessionOf(res.body.checkoutId, database.url),
    };
  }

  describe('Stripe', () => {
    /** A checkout of Pro whose completion event is ready to deliver; Stripe (the fake) knows the subscription. */
    async function stripePurchase(
      user: User,
      options: { periodEnd?: Date; created?: number } = {},
    ) {
      const { checkoutId, sessionId } = await startCheckout(user, 'stripe');
      const subscriptionId = `sub_${randomUUID().slice(0, 12)}`;
      const periodEnd = seconds(options.periodEnd ?? inDays(30));
      stripe.subscriptions.set(
        subscriptionId,
        stripeSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd,
          checkoutId,
          userId: user.id,
        }),
      );
      const completed = stripeEvent(
        'checkout.session.completed',
        stripeCheckoutSession(sessionId, subscriptionId, checkoutId),
        { created: options.created },
      );
      return { checkoutId, sessionId, subscriptionId, periodEnd, completed };
    }

    async function activeStripeUser(
      options: { periodEnd?: Date; created?: number } = {},
    ) {
      const user = await registerUser(t.http);
      const purchase = await stripePurchase(user, options);
      await deliver(t, 'stripe', purchase.completed).expect(200);
      return { user, ...purchase };
    }

    const subscriptionEvent = (
      type: string,
      fields: Parameters<typeof stripeSubscription>[0],
      created: number,
    ) => stripeEvent(type, stripeSubscription(fields), { created });

    it('activates the plan at once when the checkout completes, and quota follows', async () => {
      const user = await registerUser(t.http);
      const purchase = await stripePurchase(user);
      expect(await quotaLimit(user)).toBe(freeCredits);
      expect((await subscriptionOf(user)).status).toBe('none');

      const res = await deliver(t, 'stripe', purchase.completed).expect(200);
      expect(res.body).toEqual({ received: true, duplicate: false });

      expect(await quotaLimit(user)).toBe(proCredits);
      expect(await subscriptionOf(user)).toEqual({
        plan: { code: 'pro', name: 'Pro' },
        status: 'active',
        provider: 'stripe',
        currentPeriodEnd: new Date(purchase.periodEnd * 1000).toISOString(),
        cancelAtPeriodEnd: false,
      });
      const [checkout] = await sql<{ status: string }>(
        'SELECT status::text FROM "Checkout" WHERE id = $1',
        [purchase.checkoutId],
      );
      expect(checkout.status).toBe('completed');
      expect(
        stripe.requests.some(
          (request) =>
            request.method === 'GET' &&
            request.path === `/v1/subscriptions/${purchase.subscriptionId}`,
        ),
      ).toBe(true);

      // A renewing subscription cannot be bought twice.
      const again = await t.http
        .post('/v1/billing/checkout')
        .set('Cookie', user.cookie)
        .send({ planId: 'team', provider: 'paddle' })
        .expect(409);
      expect(again.body.code).toBe('subscription_exists');
    });

    it('refuses missing, malformed, wrong, tampered and stale signatures with 400 and changes nothing', async () => {
      const user = await registerUser(t.http);
      const { completed } = await stripePurchase(user);
      const subscriptionReads = () =>
        stripe.requests.filter((request) => request.method === 'GET').length;
      const readsBefore = subscriptionReads();
      const now = Math.floor(Date.now() / 1000);
      const tampered = completed.replace(
        '"payment_status":"paid"',
        '"payment_status":"paid","amount_total":1',
      );
      const refusals: [string, string | undefined, string][] = [
        ['missing', undefined, completed],
        ['malformed', 'not-a-signature', completed],
        ['malformed', `t=${now}`, completed],
        [
          'wrong secret',
          stripeSignature(completed, { secret: 'whsec_someone_else' }),
          completed,
        ],
        ['tampered', stripeSignature(completed), tampered],
        [
          'stale',
          stripeSignature(completed, { timestamp: now - 301 }),
          completed,
        ],
        [
          'from the future',
          stripeSignature(completed, { timestamp: now + 3600 }),
          completed,
        ],
        [
          'just beyond the tolerance ahead',
          stripeSignature(completed, { timestamp: now + 310 }),
          completed,
        ],
      ];
      for (const [, signature, payload] of refusals) {
        const req = t.http
          .post('/v1/webhooks/stripe')
          .set('Content-Type', 'application/json');
        const res = await (
          signature === undefined ? req : req.set('Stripe-Signature', signature)
        )
          .send(payload)
          .expect(400);
        expect(res.body.code).toBe('webhook_signature_invalid');
      }
      const stale = await deliver(
        t,
        'stripe',
        completed,
        stripeSignature(completed, { timestamp: now - 301 }),
      ).expect(400);
      expect(stale.body.detail).toMatch(/300 s/);
      const ahead = await deliver(
        t,
        'stripe',
        completed,
        stripeSignature(completed, { timestamp: now + 3600 }),
      ).expect(400);
      expect(ahead.body.detail).toMatch(/300 s/);
      expect(await planOf(user.id, database.url)).toBe('free');
      expect(await eventRows(eventIdOf(completed))).toEqual([]);
      expect(subscriptionReads()).toBe(readsBefore);

      // The same payload, signed within Stripe's 300 s tolerance, is applied.
      await deliver(
        t,
        'stripe',
        completed,
        stripeSignature(completed, { timestamp: now - 290 }),
      ).expect(200);
      expect(await planOf(user.id, database.url)).toBe('pro');
    });

    it('applies an event delivered 10 times concurrently exactly once', async () => {
      const user = await registerUser(t.http);
      const { completed } = await stripePurchase(user);
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => deliver(t, 'stripe', completed)),
      );
      expect(responses.map((res) => res.status)).toEqual(Array(10).fill(200));
      expect(
        responses.filter((res) => res.body.duplicate === false),
      ).toHaveLength(1);
      expect(await eventRows(eventIdOf(completed))).toHaveLength(1);
      expect(appliedLogs(eventIdOf(completed))).toHaveLength(1);
      expect(await planOf(user.id, database.url)).toBe('pro');
      const subscriptions = await sql(
        'SELECT 1 FROM "Subscription" WHERE "userId" = $1',
        [user.id],
      );
      expect(subscriptions).toHaveLength(1);
    });

    it('extends the period on renewal', async () => {
      const start = seconds(new Date());
      const { user, subscriptionId, checkoutId } = await activeStripeUser({
        created: start,
      });
      const renewedEnd = seconds(inDays(60));
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.updated',
          {
            id: subscriptionId,
            status: 'active',
            periodEnd: renewedEnd,
            checkoutId,
          },
          start + 10,
        ),
      ).expect(200);
      expect((await subscriptionOf(user)).currentPeriodEnd).toBe(
        new Date(renewedEnd * 1000).toISOString(),
      );
      expect(await planOf(user.id, database.url)).toBe('pro');
    });

    it('keeps the plan until period end when canceled at period end, then returns to Free', async () => {
      const start = seconds(new Date());
      const periodEnd = inDays(10);
      const { user, subscriptionId, checkoutId } = await activeStripeUser({
        periodEnd,
        created: start,
      });
      const cancel = subscriptionEvent(
        'customer.subscription.updated',
        {
          id: subscriptionId,
          status: 'active',
          periodEnd: seconds(periodEnd),
          checkoutId,
          cancelAtPeriodEnd: true,
          canceledAt: start + 5,
        },
        start + 5,
      );
      await deliver(t, 'stripe', cancel).expect(200);
      expect(await subscriptionOf(user)).toMatchObject({
        plan: { code: 'pro' },
        status: 'active',
        cancelAtPeriodEnd: true,
      });

      expect(await sweepAt(new Date(periodEnd.getTime() - 1000))).not.toContain(
        user.id,
      );
      expect(await planOf(user.id, database.url)).toBe('pro');
      expect(await sweepAt(new Date(periodEnd.getTime() + 1000))).toContain(
        user.id,
      );
      jest.restoreAllMocks();
      expect(await quotaLimit(user)).toBe(freeCredits);
      expect((await subscriptionOf(user)).plan.code).toBe('free');
    });

    it('returns to Free at once when the subscription is deleted', async () => {
      const start = seconds(new Date());
      const { user, subscriptionId, checkoutId } = await activeStripeUser({
        created: start,
      });
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.deleted',
          {
            id: subscriptionId,
            status: 'canceled',
            periodEnd: seconds(inDays(30)),
            checkoutId,
            canceledAt: start + 20,
          },
          start + 20,
        ),
      ).expect(200);
      expect(await quotaLimit(user)).toBe(freeCredits);
      expect(await subscriptionOf(user)).toMatchObject({
        plan: { code: 'free' },
        status: 'canceled',
        provider: 'stripe',
      });
    });

    it('never resurrects a canceled subscription, whatever order the events arrive in', async () => {
      const start = seconds(new Date());
      const { user, subscriptionId, checkoutId } = await activeStripeUser({
        created: start,
      });
      const fields = {
        id: subscriptionId,
        periodEnd: seconds(inDays(30)),
        checkoutId,
      };
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.deleted',
          { ...fields, status: 'canceled', canceledAt: start + 100 },
          start + 100,
        ),
      ).expect(200);
      expect(await planOf(user.id, database.url)).toBe('free');

      // An older update delivered late, and a later one, both acknowledged and both without effect.
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.updated',
          { ...fields, status: 'active' },
          start + 50,
        ),
      ).expect(200);
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.updated',
          { ...fields, status: 'active' },
          start + 200,
        ),
      ).expect(200);
      expect(await planOf(user.id, database.url)).toBe('free');
      expect((await subscriptionOf(user)).status).toBe('canceled');
    });

    it('keeps a past-due plan for the grace after a failed renewal, then returns to Free', async () => {
      const start = seconds(new Date());
      const { user, subscriptionId, checkoutId } = await activeStripeUser({
        created: start,
      });
      // Stripe moves the period on at renewal even when its invoice fails: the grace counts from the failure.
      const failedAt = start + 30;
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.updated',
          {
            id: subscriptionId,
            status: 'past_due',
            periodEnd: seconds(inDays(60)),
            checkoutId,
          },
          failedAt,
        ),
      ).expect(200);
      expect(await subscriptionOf(user)).toMatchObject({
        plan: { code: 'pro' },
        status: 'past_due',
      });

      const graceEnd = failedAt * 1000 + t.config.billing.graceMs;
      expect(await sweepAt(new Date(graceEnd - 1000))).not.toContain(user.id);
      expect(await planOf(user.id, database.url)).toBe('pro');
      expect(await sweepAt(new Date(graceEnd + 1000))).toContain(user.id);
      expect(await planOf(user.id, database.url)).toBe('free');
    });

    it('gives the plan back when a past-due subscription is paid after its grace ran out', async () => {
      const start = seconds(new Date());
      const { user, subscriptionId, checkoutId } = await activeStripeUser({
        created: start,
      });
      const fields = {
        id: subscriptionId,
        periodEnd: seconds(inDays(60)),
        checkoutId,
      };
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.updated',
          { ...fields, status: 'past_due' },
          start + 30,
        ),
      ).expect(200);
      expect(
        await sweepAt(
          new Date((start + 30) * 1000 + t.config.billing.graceMs + 1000),
        ),
      ).toContain(user.id);
      jest.restoreAllMocks();
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.updated',
          { ...fields, status: 'active' },
          start + 40,
        ),
      ).expect(200);
      expect(await planOf(user.id, database.url)).toBe('pro');
    });

    it('leaves a plan an admin set alone on renewal; an admin setting the subscription’s plan hands it back to billing', async () => {
      const start = seconds(new Date());
      const { user, subscriptionId, checkoutId } = await activeStripeUser({
        created: start,
      });
      const admin = await registerUser(t.http);
      await sql(`UPDATE "User" SET role = 'admin' WHERE id = $1`, [admin.id]);
      const setPlan = (planCode: string) =>
        t.http
          .put(`/v1/admin/users/${user.id}/plan`)
          .set('Cookie', admin.cookie)
          .send({ planCode, reason: 'support' })
          .expect(200);
      const fields = { id: subscriptionId, status: 'active', checkoutId };

      await setPlan('free');
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.updated',
          { ...fields, periodEnd: seconds(inDays(60)) },
          start + 10,
        ),
      ).expect(200);
      expect(await planOf(user.id, database.url)).toBe('free');
      expect(await sweepAt(inDays(70))).not.toContain(user.id);
      jest.restoreAllMocks();

      await setPlan('pro');
      const [linked] = await sql<{ planSubscriptionId: string | null }>(
        'SELECT "planSubscriptionId"::text AS "planSubscriptionId" FROM "User" WHERE id = $1',
        [user.id],
      );
      expect(linked.planSubscriptionId).not.toBeNull();
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.deleted',
          { ...fields, status: 'canceled', periodEnd: seconds(inDays(60)) },
          start + 20,
        ),
      ).expect(200);
      expect(await planOf(user.id, database.url)).toBe('free');
    });

    it('lets a purchase whose payment completes later replace a plan an admin set', async () => {
      const user = await registerUser(t.http);
      const admin = await registerUser(t.http);
      await sql(`UPDATE "User" SET role = 'admin' WHERE id = $1`, [admin.id]);
      await t.http
        .put(`/v1/admin/users/${user.id}/plan`)
        .set('Cookie', admin.cookie)
        .send({ planCode: 'free', reason: 'support' })
        .expect(200);
      const purchase = await stripePurchase(user);
      const created = JSON.parse(purchase.completed).created as number;
      stripe.subscriptions.set(
        purchase.subscriptionId,
        stripeSubscription({
          id: purchase.subscriptionId,
          status: 'incomplete',
          periodEnd: purchase.periodEnd,
          checkoutId: purchase.checkoutId,
        }),
      );
      await deliver(t, 'stripe', purchase.completed).expect(200);
      expect(await planOf(user.id, database.url)).toBe('free');
      await deliver(
        t,
        'stripe',
        subscriptionEvent(
          'customer.subscription.updated',
          {
            id: purchase.subscriptionId,
            status: 'active',
            periodEnd: purchase.periodEnd,
            checkoutId: purchase.checkoutId,
          },
          created + 5,
        ),
      ).expect(200);
      expect(await planOf(user.id, database.url)).toBe('pro');
    });

    it('asks again for a subscription event that comes before its checkout event, then applies both', async () => {
      const user = await registerUser(t.http);
      const purchase = await stripePurchase(user);
      const createdAt = JSON.parse(purchase.completed).created as number;
      const early = subscriptionEvent(
        'customer.subscription.created',
        {
          id: purchase.subscriptionId,
          status: 'active',
          periodEnd: purchase.periodEnd,
          checkoutId: purchase.checkoutId,
        },
        createdAt,
      );
      const asked = await deliver(t, 'stripe', early).expect(503);
      expect(asked.body.code).toBe('webhook_not_processed');
      expect(await planOf(user.id, database.url)).toBe('free');
      await deliver(t, 'stripe', purchase.completed).expect(200);
      expect(await planOf(user.id, database.url)).toBe('pro');
      expect(
        (await deliver(t, 'stripe', early).expect(200)).body.duplicate,
      ).toBe(false);
      expect(await planOf(user.id, database.url)).toBe('pro');
      const [checkout] = await sql<{ status: string }>(
        'SELECT status::text FROM "Checkout" WHERE id = $1',
        [purchase.checkoutId],
      );
      expect(checkout.status).toBe('completed');
    });

    it('honours a payment of a checkout given up locally after an hour', async () => {
      const user = await registerUser(t.http);
      const purchase = await stripePurchase(user);
      await sql(
        `UPDATE "Checkout" SET "createdAt" = now() - interval '61 minutes' WHERE id = $1`,
        [purchase.checkoutId],
      );
      await t.http
        .post('/v1/billing/checkout')
        .set('Cookie', user.cookie)
        .send({ planId: 'pro', provider: 'stripe' })
        .expect(201);
      const [expired] = await sql<{ status: string }>(
        'SELECT status::text FROM "Checkout" WHERE id = $1',
        [purchase.checkoutId],
      );
      expect(expired.status).toBe('expired');
      await deliver(t, 'stripe', purchase.completed).expect(200);
      expect(await planOf(user.id, database.url)).toBe('pro');
      const [completed] = await sql<{ status: string }>(
        'SELECT status::text FROM "Checkout" WHERE id = $1',
        [purchase.checkoutId],
      );
      expect(completed.status).toBe('completed');
    });

    it('refuses signed events whose time is implausible with 400', async () => {
      for (const created of [9e12, 1, seconds(inDays(2))]) {
        const payload = stripeEvent(
          'invoice.created',
          { id: 'in_3', object: 'invoice' },
          { created },
        );
        expect(
          (await deliver(t, 'stripe', payload).expect(400)).body.code,
        ).toBe('webhook_payload_invalid');
        expect(await eventRows(eventIdOf(payload))).toEqual([]);
      }
    });

    it('acknowledges and ignores unknown event types and subscriptions not bought here', async () => {
      const user = await registerUser(t.http);
      const unknown = stripeEvent('invoice.finalized', {
        id: 'in_1',
        object: 'invoice',
      });
      expect((await deliver(t, 'stripe', unknown).expect(200)).body).toEqual({
        received: true,
        duplicate: false,
      });
      const foreign = subscriptionEvent(
        'customer.subscription.created',
        {
          id: 'sub_dashboard_made',
          status: 'active',
          periodEnd: seconds(inDays(30)),
        },
        seconds(new Date()),
      );
      await deliver(t, 'stripe', foreign).expect(200);
      expect(
        await sql(
          'SELECT 1 FROM "Subscription" WHERE "providerSubscriptionId" = $1',
          ['sub_dashboard_made'],
        ),
      ).toEqual([]);
      expect(await planOf(user.id, database.url)).toBe('free');
    });

    it('refuses a signed event without the fields it needs with 400, naming them', async () => {
      const payload = stripeEvent('customer.subscription.updated', {
        id: 'sub_partial',
        object: 'subscription',
      });
      const res = await deliver(t, 'stripe', payload).expect(400);
      expect(res.body.code).toBe('webhook_payload_invalid');
      expect(
        res.body.errors.map((error: { field: string }) => error.field),
      ).toEqual(expect.arrayContaining(['status', 'cancel_at_period_end']));
      expect(await eventRows(eventIdOf(payload))).toEqual([]);
    });

    it('needs no session and passes the cross-site check (the signature authenticates it)', async () => {
      const payload = stripeEvent('invoice.created', {
        id: 'in_2',
        object: 'invoice',
      });
      await deliver(t, 'stripe', payload)
        .set('Origin', 'https://attacker.example')
        .expect(200);
    });
  });

  describe('Paddle', () => {
    async function paddlePurchase(
      user: User,
      options: { periodEnd?: Date; occurredAt?: Date } = {},
    ) {
      const { checkoutId, sessionId } = await startCheckout(user, 'paddle');
      const subscriptionId = `sub_${randomUUID().replace(/-/g, '').slice(0, 26)}`;
      const periodEnd = options.periodEnd ?? inDays(30);
      const completed = paddleEvent(
        'transaction.completed',
        paddleTransaction({
          id: sessionId,
          subscriptionId,
          checkoutId,
          periodEnd,
        }),
        { occurredAt: options.occurredAt },
      );
      return { checkoutId, sessionId, subscriptionId, periodEnd, completed };
    }

    async function activePaddleUser(
      options: { periodEnd?: Date; occurredAt?: Date } = {},
    ) {
      const user = await registerUser(t.http);
      const purchase = await paddlePurchase(user, options);
      await deliver(t, 'paddle', purchase.completed).expect(200);
      return { user, ...purchase };
    }

    const later = (from: Date, ms: number) => new Date(from.getTime() + ms);

    it('activates the plan when the transaction completes, and quota follows', async () => {
      const user = await registerUser(t.http);
      const purchase = await paddlePurchase(user);
      expect(await quotaLimit(user)).toBe(freeCredits);
      expect(
        (await deliver(t, 'paddle', purchase.completed).expect(200)).body,
      ).toEqual({ received: true, duplicate: false });
      expect(await quotaLimit(user)).toBe(proCredits);
      expect(await subscriptionOf(user)).toEqual({
        plan: { code: 'pro', name: 'Pro' },
        status: 'active',
        provider: 'paddle',
        currentPeriodEnd: purchase.periodEnd.toISOString(),
        cancelAtPeriodEnd: false,
      });
    });

    it('refuses missing, malformed, wrong, tampered and stale signatures with 400 and changes nothing', async () => {
      const user = await registerUser(t.http);
      const { completed } = await paddlePurchase(user);
      const now = Math.floor(Date.now() / 1000);
      const tampered = completed.replace(
        '"status":"completed"',
        '"status":"completed","extra":1',
      );
      const refusals: [string | undefined, string][] = [
        [undefined, completed],
        ['ts=abc;h1=00', completed],
        [`h1=${'a'.repeat(64)}`, completed],
        [
          paddleSignature(completed, { secrets: ['pdl_ntfset_someone_else'] }),
          completed,
        ],
        [paddleSignature(completed), tampered],
        [paddleSignature(completed, { timestamp: now - 6 }), completed],
      ];
      for (const [signature, payload] of refusals) {
        const req = t.http
          .post('/v1/webhooks/paddle')
          .set('Content-Type', 'application/json');
        const res = await (
          signature === undefined ? req : req.set('Paddle-Signature', signature)
        )
          .send(payload)
          .expect(400);
        expect(res.body.code).toBe('webhook_signature_invalid');
      }
      expect(await planOf(user.id, database.url)).toBe('free');
      expect(await eventRows(eventIdOf(completed))).toEqual([]);
    });

    it('accepts any valid h1 while the secret rotates', async () => {
      const user = await registerUser(t.http);
      const { completed } = await paddlePurchase(user);
      const rotating = paddleSignature(completed, {
        secrets: [
          'pdl_ntfset_the_next_secret',
          'pdl_ntfset_01test_secret_for_the_suite',
        ],
      });
      await deliver(t, 'paddle', completed, rotating).expect(200);
      expect(await planOf(user.id, database.url)).toBe('pro');
    });

    it('applies a notification delivered 10 times concurrently exactly once', async () => {
      const user = await registerUser(t.http);
      const { completed } = await paddlePurchase(user);
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => deliver(t, 'paddle', completed)),
      );
      expect(responses.map((res) => res.status)).toEqual(Array(10).fill(200));
      expect(
        responses.filter((res) => res.body.duplicate === false),
      ).toHaveLength(1);
      expect(await eventRows(eventIdOf(completed))).toHaveLength(1);
      expect(appliedLogs(eventIdOf(completed))).toHaveLength(1);
      expect(await planOf(user.id, database.url)).toBe('pro');
    });

    it('extends the period when a renewal transaction completes', async () => {
      const start = new Date();
      const { user, subscriptionId } = await activePaddleUser({
        occurredAt: start,
      });
      const renewedEnd = inDays(60);
      const renewal = paddleEvent(
        'transaction.completed',
        paddleTransaction({
          id: 'txn_renewal_' + randomUUID().slice(0, 8),
          subscriptionId,
          periodEnd: renewedEnd,
        }),
        { occurredAt: later(start, 1000) },
      );
      await deliver(t, 'paddle', renewal).expect(200);
      expect((await subscriptionOf(user)).currentPeriodEnd).toBe(
        renewedEnd.toISOString(),
      );
    });

    it('keeps the plan through a scheduled cancellation, returns to Free when Paddle cancels, and ignores late updates', async () => {
      const start = new Date();
      const { user, subscriptionId, checkoutId, periodEnd } =
        await activePaddleUser({ occurredAt: start });
      const scheduled = paddleEvent(
        'subscription.updated',
        paddleSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd,
          checkoutId,
          scheduledCancel: true,
        }),
        { occurredAt: later(start, 1000) },
      );
      await deliver(t, 'paddle', scheduled).expect(200);
      expect(await subscriptionOf(user)).toMatchObject({
        plan: { code: 'pro' },
        cancelAtPeriodEnd: true,
      });

      const canceled = paddleEvent(
        'subscription.canceled',
        paddleSubscription({
          id: subscriptionId,
          status: 'canceled',
          periodEnd,
          checkoutId,
          canceledAt: later(start, 3000),
        }),
        { occurredAt: later(start, 3000) },
      );
      await deliver(t, 'paddle', canceled).expect(200);
      expect(await quotaLimit(user)).toBe(freeCredits);

      const late = paddleEvent(
        'subscription.updated',
        paddleSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd,
          checkoutId,
        }),
        { occurredAt: later(start, 2000) },
      );
      await deliver(t, 'paddle', late).expect(200);
      const newer = paddleEvent(
        'subscription.activated',
        paddleSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd,
          checkoutId,
        }),
        { occurredAt: later(start, 9000) },
      );
      await deliver(t, 'paddle', newer).expect(200);
      expect(await planOf(user.id, database.url)).toBe('free');
      expect((await subscriptionOf(user)).status).toBe('canceled');
    });

    it('returns a past-due subscription to Free once the grace after the failure is over', async () => {
      const start = new Date();
      const { user, subscriptionId, checkoutId } = await activePaddleUser({
        occurredAt: start,
      });
      const failedAt = later(start, 1000);
      await deliver(
        t,
        'paddle',
        paddleEvent(
          'subscription.past_due',
          paddleSubscription({
            id: subscriptionId,
            status: 'past_due',
            periodEnd: inDays(60),
            checkoutId,
          }),
          { occurredAt: failedAt },
        ),
      ).expect(200);
      expect(await planOf(user.id, database.url)).toBe('pro');
      expect(
        await sweepAt(later(failedAt, t.config.billing.graceMs - 1000)),
      ).not.toContain(user.id);
      expect(
        await sweepAt(later(failedAt, t.config.billing.graceMs + 1000)),
      ).toContain(user.id);
      expect(await planOf(user.id, database.url)).toBe('free');
    });

    it('activates from subscription.created arriving before the transaction, through its transaction id', async () => {
      const user = await registerUser(t.http);
      const purchase = await paddlePurchase(user);
      const created = paddleEvent(
        'subscription.created',
        paddleSubscription({
          id: purchase.subscriptionId,
          status: 'active',
          periodEnd: purchase.periodEnd,
          checkoutId: purchase.checkoutId,
          transactionId: purchase.sessionId,
        }),
      );
      await deliver(t, 'paddle', created).expect(200);
      expect(await planOf(user.id, database.url)).toBe('pro');
      await deliver(t, 'paddle', purchase.completed).expect(200);
      expect(
        await sql('SELECT 1 FROM "Subscription" WHERE "userId" = $1', [
          user.id,
        ]),
      ).toHaveLength(1);
    });

    it('grants nothing for a transaction that is not ours, even carrying our checkout id in custom data', async () => {
      const user = await registerUser(t.http);
      const purchase = await paddlePurchase(user);
      const foreignTransaction = paddleEvent(
        'transaction.completed',
        paddleTransaction({
          id: `txn_foreign_${randomUUID().slice(0, 8)}`,
          subscriptionId: 'sub_foreign_1',
          checkoutId: purchase.checkoutId,
          periodEnd: inDays(30),
        }),
      );
      // Not linked, but it names a checkout still waiting: the provider is asked to deliver it again later.
      expect(
        (await deliver(t, 'paddle', foreignTransaction).expect(503)).body.code,
      ).toBe('webhook_not_processed');
      const foreignSubscription = paddleEvent(
        'subscription.created',
        paddleSubscription({
          id: 'sub_foreign_2',
          status: 'active',
          periodEnd: inDays(30),
          checkoutId: randomUUID(),
          transactionId: 'txn_not_ours',
        }),
      );
      await deliver(t, 'paddle', foreignSubscription).expect(200);
      expect(await planOf(user.id, database.url)).toBe('free');
      expect(
        await sql(
          'SELECT 1 FROM "Subscription" WHERE "providerSubscriptionId" IN ($1, $2)',
          ['sub_foreign_1', 'sub_foreign_2'],
        ),
      ).toEqual([]);
      const [checkout] = await sql<{ status: string }>(
        'SELECT status::text FROM "Checkout" WHERE id = $1',
        [purchase.checkoutId],
      );
      expect(checkout.status).toBe('pending');
    });

    it('applies a purchase’s transaction and subscription events arriving together, for many purchases, without deadlock', async () => {
      const purchases = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const user = await registerUser(t.http);
          return { user, ...(await paddlePurchase(user)) };
        }),
      );
      const responses = await Promise.all(
        purchases.flatMap((purchase) => [
          deliver(t, 'paddle', purchase.completed),
          deliver(
            t,
            'paddle',
            paddleEvent(
              'subscription.created',
              paddleSubscription({
                id: purchase.subscriptionId,
                status: 'active',
                periodEnd: purchase.periodEnd,
                checkoutId: purchase.checkoutId,
                transactionId: purchase.sessionId,
              }),
            ),
          ),
        ]),
      );
      expect(responses.map((res) => res.status)).toEqual(Array(16).fill(200));
      for (const purchase of purchases)
        expect(await planOf(purchase.user.id, database.url)).toBe('pro');
    });

    it('does not keep asking for an event that names a checkout given up', async () => {
      const user = await registerUser(t.http);
      const purchase = await paddlePurchase(user);
      await sql(`UPDATE "Checkout" SET status = 'expired' WHERE id = $1`, [
        purchase.checkoutId,
      ]);
      const early = paddleEvent(
        'subscription.updated',
        paddleSubscription({
          id: purchase.subscriptionId,
          status: 'active',
          periodEnd: purchase.periodEnd,
          checkoutId: purchase.checkoutId,
        }),
      );
      expect(
        (await deliver(t, 'paddle', early).expect(200)).body.duplicate,
      ).toBe(false);
      expect(await planOf(user.id, database.url)).toBe('free');
    });

    it('gives one checkout one subscription', async () => {
      const { user, sessionId, checkoutId, periodEnd } =
        await activePaddleUser();
      const second = paddleEvent(
        'subscription.created',
        paddleSubscription({
          id: `sub_second_${randomUUID().slice(0, 8)}`,
          status: 'active',
          periodEnd,
          checkoutId,
          transactionId: sessionId,
        }),
      );
      await deliver(t, 'paddle', second).expect(200);
      expect(
        await sql('SELECT 1 FROM "Subscription" WHERE "userId" = $1', [
          user.id,
        ]),
      ).toHaveLength(1);
    });

    it('acknowledges and ignores unknown notification types', async () => {
      const payload = paddleEvent('customer.created', {
        id: 'ctm_1',
        email: 'x@example.com',
      });
      expect((await deliver(t, 'paddle', payload).expect(200)).body).toEqual({
        received: true,
        duplicate: false,
      });
    });
  });

  describe('both providers', () => {
    it('applies two purchases of one user delivered at once without deadlock; the better plan wins', async () => {
      const users = await Promise.all(
        Array.from({ length: 4 }, () => registerUser(t.http)),
      );
      const deliveries = await Promise.all(
        users.map(async (user) => {
          const pro = await startCheckout(user, 'stripe', 'pro');
          const team = await startCheckout(user, 'paddle', 'team');
          const stripeSub = `sub_${randomUUID().slice(0, 12)}`;
          stripe.subscriptions.set(
            stripeSub,
            stripeSubscription({
              id: stripeSub,
              status: 'active',
              periodEnd: seconds(inDays(30)),
              checkoutId: pro.checkoutId,
            }),
          );
          return [
            stripeEvent(
              'checkout.session.completed',
              stripeCheckoutSession(pro.sessionId, stripeSub, pro.checkoutId),
            ),
            paddleEvent(
              'transaction.completed',
              paddleTransaction({
                id: team.sessionId,
                subscriptionId: `sub_${randomUUID().slice(0, 12)}`,
                checkoutId: team.checkoutId,
                periodEnd: inDays(30),
              }),
            ),
          ] as const;
        }),
      );
      const responses = await Promise.all(
        deliveries.flatMap(([stripePaid, paddlePaid]) => [
          deliver(t, 'stripe', stripePaid),
          deliver(t, 'paddle', paddlePaid),
        ]),
      );
      expect(responses.map((res) => res.status)).toEqual(Array(8).fill(200));
      for (const user of users)
        expect(await planOf(user.id, database.url)).toBe('team');
      expect(
        t.logs.some(
          (line) =>
            line.msg === 'user pays for more than one renewing subscription',
        ),
      ).toBe(true);
    });

    it('sweeps every lapsed plan, however many are waiting, oldest first', async () => {
      const lapsedAt = new Date(Date.now() - 3600_000);
      const ids = await sql<{ id: string }>(
        `WITH users AS (
           INSERT INTO "User" (id, email, "planCode", "updatedAt")
           SELECT gen_random_uuid(), 'lapsed-' || gen_random_uuid() || '@example.com', 'pro', now() FROM generate_series(1, 230)
           RETURNING id
         ), subscriptions AS (
           INSERT INTO "Subscription" (id, "userId", "planCode", provider, "providerSubscriptionId", status, "currentPeriodEnd", "lastEventAt", "grantsUntil", "updatedAt")
           SELECT gen_random_uuid(), id, 'pro', 'stripe', 'sub_lapsed_' || id, 'active', $1, $1, $1, now() FROM users
           RETURNING id, "userId"
         )
         UPDATE "User" u SET "planSubscriptionId" = s.id FROM subscriptions s WHERE u.id = s."userId" RETURNING u.id::text`,
        [lapsedAt],
      );
      const released = await t.app.get(BillingSweeperService).sweep();
      expect(released).toEqual(
        expect.arrayContaining(ids.map((row) => row.id)),
      );
      const stillPro = await sql(
        'SELECT 1 FROM "User" WHERE id = ANY($1::uuid[]) AND "planCode" <> $2',
        [ids.map((row) => row.id), 'free'],
      );
      expect(stillPro).toEqual([]);
    });
  });
});
