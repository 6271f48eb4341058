import { randomUUID } from 'node:crypto';
import { BillingSweeperService } from '../src/billing/billing-sweeper.service';
import { Clock } from '../src/common/clock';
import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import {
  paddleEvent,
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
  providerSessionOf,
  seconds,
} from './support/billing';
import {
  registerUser,
  registerVerifiedUser,
  uniqueEmail,
} from './support/factories';
import { sql as sqlOn } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;
type Provider = 'stripe' | 'paddle';

/**
 * Seats of the Team plan bought for an organization, through the real gateways against the fake providers,
 * confirmed by signed webhooks; seat changes; lapses; and plans set by admins. On a database of its own:
 * the sweeps move the clock ahead, and a sweep releases every lapsed plan of its database.
 */
describe('organization billing', () => {
  const rootEmail = uniqueEmail('root');
  let database: ScratchDatabase;
  let t: TestApp;
  let stripe: FakeStripe;
  let paddle: FakePaddle;
  let root: User;
  let team: { priceAmount: number; priceCurrency: string; name: string };
  let teamCredits: number;
  let enterpriseCredits: number;

  beforeAll(async () => {
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    database = await createMigratedDatabase('chat_org_billing');
    t = await bootTestApp({
      ...billingEnv(stripe, paddle),
      DATABASE_URL: database.url,
      ADMIN_EMAILS: rootEmail,
    });
    root = await registerVerifiedUser(t.http, {
      email: rootEmail,
      databaseUrl: database.url,
    });
    [team] = await sql<typeof team>(
      'SELECT "priceAmount", "priceCurrency", name FROM "Plan" WHERE code = $1',
      ['team'],
    );
    teamCredits = await dailyCreditsOf('team', database.url);
    enterpriseCredits = await dailyCreditsOf('enterprise', database.url);
  });
  afterAll(async () => {
    await t.close();
    await stripe.close();
    await paddle.close();
    await database.drop();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    stripe.failWith = null;
    paddle.failWith = null;
    stripe.declinePayments = false;
  });

  function sql<T = Record<string, unknown>>(
    query: string,
    values: unknown[] = [],
  ) {
    return sqlOn<T>(query, values, database.url);
  }

  async function createOrg(owner: User): Promise<string> {
    const res = await t.http
      .post('/v1/orgs')
      .set('Cookie', owner.cookie)
      .send({ name: `Org ${randomUUID().slice(0, 8)}` })
      .expect(201);
    return res.body.id as string;
  }

  /** A member added as accepting an invitation would add them (the invitation flow has its own suite). */
  async function addMember(
    orgId: string,
    role: 'admin' | 'member',
  ): Promise<User> {
    const user = await registerUser(t.http);
    await sql(
      'INSERT INTO "OrgMember" ("organizationId", "userId", role) VALUES ($1, $2, $3::"OrgRole")',
      [orgId, user.id, role],
    );
    return user;
  }

  const checkout = (user: User, body: Record<string, unknown>) =>
    t.http.post('/v1/billing/checkout').set('Cookie', user.cookie).send(body);
  const changeSeats = (user: User, orgId: string, body: unknown) =>
    t.http
      .patch(`/v1/orgs/${orgId}/subscription`)
      .set('Cookie', user.cookie)
      .send(body as object);
  const orgOf = async (user: User, orgId: string) =>
    (
      await t.http
        .get(`/v1/orgs/${orgId}`)
        .set('Cookie', user.cookie)
        .expect(200)
    ).body as { plan: { code: string }; seats: number; memberCount: number };
  const poolLimit = async (user: User, orgId: string) =>
    (
      await t.http
        .get(`/v1/orgs/${orgId}/quota`)
        .set('Cookie', user.cookie)
        .expect(200)
    ).body.pool.limit as number;
  const orgRow = async (orgId: string) =>
    (
      await sql<{
        planCode: string;
        seats: number;
        planSubscriptionId: string | null;
        planSetByAdmin: boolean;
      }>(
        'SELECT "planCode", seats, "planSubscriptionId"::text AS "planSubscriptionId", "planSetByAdmin" FROM "Organization" WHERE id = $1',
        [orgId],
      )
    )[0];
  const auditOf = (orgId: string) =>
    sql<{
      action: string;
      adminId: string | null;
      before: Record<string, unknown> | null;
      after: Record<string, unknown> | null;
      reason: string | null;
    }>(
      `SELECT action, "adminId"::text AS "adminId", before, after, reason FROM "AuditLog"
        WHERE "targetType" = 'organization' AND "targetId" = $1 ORDER BY "createdAt", id`,
      [orgId],
    );
  const checkoutsOfOrg = (orgId: string) =>
    sql<{
      id: string;
      status: string;
      amount: number;
      seats: number;
      userId: string;
    }>(
      'SELECT id::text, status::text, amount, seats, "userId"::text AS "userId" FROM "Checkout" WHERE "organizationId" = $1 ORDER BY "createdAt"',
      [orgId],
    );
  const providerCalls = () => stripe.requests.length + paddle.requests.length;
  const subscriptionsOfOrg = (orgId: string) =>
    sql<{
      id: string;
      providerSubscriptionId: string;
      status: string;
      seats: number;
    }>(
      'SELECT id::text, "providerSubscriptionId", status::text, seats FROM "Subscription" WHERE "organizationId" = $1 ORDER BY "createdAt", id',
      [orgId],
    );
  const warnings = (msg: string) =>
    t.logs.filter((line) => line.level === 'warn' && line.msg === msg);

  /** Moves the service's clock (plans end by it) and runs the sweeper as its timer would. */
  async function sweepAt(when: Date): Promise<string[]> {
    jest.spyOn(t.app.get(Clock), 'now').mockReturnValue(when);
    return t.app.get(BillingSweeperService).sweep();
  }

  async function startOrgCheckout(
    user: User,
    orgId: string,
    provider: Provider,
    seats: number,
  ) {
    const res = await checkout(user, {
      planId: 'team',
      provider,
      organizationId: orgId,
      seats,
    }).expect(201);
    return {
      checkoutId: res.body.checkoutId as string,
      sessionId: await providerSessionOf(res.body.checkoutId, database.url),
    };
  }

  /** An organization whose owner bought `seats` through Stripe, confirmed by the checkout's webhook. */
  async function stripeOrg(seats: number, periodEnd = inDays(30)) {
    const owner = await registerUser(t.http);
    const orgId = await createOrg(owner);
    const { checkoutId, sessionId } = await startOrgCheckout(
      owner,
      orgId,
      'stripe',
      seats,
    );
    const subscriptionId = `sub_${randomUUID().slice(0, 12)}`;
    const fields = {
      id: subscriptionId,
      status: 'active',
      periodEnd: seconds(periodEnd),
      checkoutId,
      userId: owner.id,
      organizationId: orgId,
      planCode: 'team',
      quantity: seats,
    };
    stripe.subscriptions.set(subscriptionId, stripeSubscription(fields));
    const created = seconds(new Date());
    const completed = stripeEvent(
      'checkout.session.completed',
      stripeCheckoutSession(sessionId, subscriptionId, checkoutId),
      { created },
    );
    return {
      owner,
      orgId,
      checkoutId,
      subscriptionId,
      fields,
      created,
      completed,
    };
  }

  async function activeStripeOrg(seats: number, periodEnd?: Date) {
    const purchase = await stripeOrg(seats, periodEnd);
    await deliver(t, 'stripe', purchase.completed).expect(200);
    return purchase;
  }

  describe('checkout', () => {
    it('charges the Team price times the seats through Stripe’s line item quantity, with the organization in the metadata', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const before = stripe.creations().length;
      const res = await checkout(owner, {
        planId: 'team',
        provider: 'stripe',
        organizationId: orgId,
        seats: 7,
      }).expect(201);
      expect(res.body).toEqual({
        checkoutId: expect.any(String),
        provider: 'stripe',
        url: expect.stringMatching(/^https:\/\/checkout\.stripe\.test\//),
      });

      const calls = stripe.creations().slice(before);
      expect(calls).toHaveLength(1);
      const fields = FakeStripe.fields(calls[0]);
      expect(fields).toMatchObject({
        mode: 'subscription',
        'line_items[0][quantity]': '7',
        'line_items[0][price_data][unit_amount]': String(team.priceAmount),
        'line_items[0][price_data][currency]': team.priceCurrency.toLowerCase(),
        'metadata[checkoutId]': res.body.checkoutId,
        'metadata[userId]': owner.id,
        'metadata[organizationId]': orgId,
        'subscription_data[metadata][organizationId]': orgId,
        'subscription_data[metadata][checkoutId]': res.body.checkoutId,
      });
      expect(fields['line_items[1][quantity]']).toBeUndefined();

      expect(await checkoutsOfOrg(orgId)).toEqual([
        {
          id: res.body.checkoutId,
          status: 'pending',
          amount: team.priceAmount * 7,
          seats: 7,
          userId: owner.id,
        },
      ]);
      // Nothing changes before the provider confirms the payment.
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'free' },
        seats: 0,
      });
    });

    it('charges the Team price times the seats through Paddle’s item quantity, with the organization in custom data', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const before = paddle.creations().length;
      const res = await checkout(owner, {
        planId: 'team',
        provider: 'paddle',
        organizationId: orgId,
        seats: 12,
      }).expect(201);
      const calls = paddle.creations().slice(before);
      expect(calls).toHaveLength(1);
      const body = JSON.parse(calls[0].body);
      expect(body.items).toEqual([
        {
          quantity: 12,
          price: expect.objectContaining({
            unit_price: {
              amount: String(team.priceAmount),
              currency_code: team.priceCurrency,
            },
            // Paddle's default range is 1 to 100: seats need their own.
            quantity: { minimum: 1, maximum: 1000 },
          }),
        },
      ]);
      expect(body.custom_data).toEqual({
        checkoutId: res.body.checkoutId,
        userId: owner.id,
        planCode: 'team',
        organizationId: orgId,
      });
      const [row] = await checkoutsOfOrg(orgId);
      expect(row).toMatchObject({
        amount: team.priceAmount * 12,
        seats: 12,
        status: 'pending',
      });
    });

    it('hands back the same checkout for the same order, and replaces it for other seats', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const body = {
        planId: 'team',
        provider: 'stripe',
        organizationId: orgId,
        seats: 3,
      };
      const first = await checkout(owner, body).expect(201);
      const again = await checkout(owner, body).expect(200);
      expect(again.body.checkoutId).toBe(first.body.checkoutId);
      const other = await checkout(owner, { ...body, seats: 4 }).expect(201);
      expect(other.body.checkoutId).not.toBe(first.body.checkoutId);
      expect(
        (await checkoutsOfOrg(orgId)).map((row) => [row.status, row.amount]),
      ).toEqual([
        ['expired', team.priceAmount * 3],
        ['pending', team.priceAmount * 4],
      ]);
      // Another admin cannot open a second purchase for the same organization meanwhile.
      const admin = await addMember(orgId, 'admin');
      const calls = providerCalls();
      const busy = await checkout(admin, body).expect(409);
      expect(busy.body.code).toBe('conflict');
      expect(providerCalls()).toBe(calls);
    });

    it('opens Stripe sessions that expire with the pending window, and expires a replaced one at Stripe', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const before = stripe.creations().length;
      const openedAt = Math.floor(Date.now() / 1000);
      const first = await startOrgCheckout(owner, orgId, 'stripe', 3);
      // Stripe's default is 24 hours; we count a checkout as pending for an hour.
      const expiresAt = Number(
        FakeStripe.fields(stripe.creations()[before]).expires_at,
      );
      expect(expiresAt).toBeGreaterThanOrEqual(openedAt + 3600 - 5);
      expect(expiresAt).toBeLessThanOrEqual(
        Math.floor(Date.now() / 1000) + 3600,
      );

      const expirationsBefore = stripe.expirations().length;
      const second = await startOrgCheckout(owner, orgId, 'stripe', 5);
      expect(
        stripe
          .expirations()
          .slice(expirationsBefore)
          .map((request) => request.path),
      ).toEqual([`/v1/checkout/sessions/${first.sessionId}/expire`]);
      // The 3-seat session can no longer be paid; the 5-seat one can.
      expect(stripe.sessions.get(first.sessionId)?.status).toBe('expired');
      expect(stripe.sessions.get(second.sessionId)?.status).toBe('open');
      expect(
        (await checkoutsOfOrg(orgId)).map((row) => [row.seats, row.status]),
      ).toEqual([
        [3, 'expired'],
        [5, 'pending'],
      ]);
    });

    it('cancels a replaced Paddle transaction once the buyer entered their details; a draft Paddle will not cancel stays, logged', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const first = await startOrgCheckout(owner, orgId, 'paddle', 3);
      paddle.buyerEntersDetails(first.sessionId);
      const before = paddle.expirations().length;
      const second = await startOrgCheckout(owner, orgId, 'paddle', 5);
      const asked = paddle.expirations().slice(before);
      expect(
        asked.map((request) => [request.path, JSON.parse(request.body)]),
      ).toEqual([[`/transactions/${first.sessionId}`, { status: 'canceled' }]]);
      expect(paddle.transactions.get(first.sessionId)?.status).toBe('canceled');

      // Still a draft: Paddle refuses to cancel it; the new checkout opens anyway (the webhook guards the rest).
      const third = await startOrgCheckout(owner, orgId, 'paddle', 6);
      expect(
        paddle
          .expirations()
          .slice(before + 1)
          .map((request) => request.path),
      ).toEqual([`/transactions/${second.sessionId}`]);
      expect(paddle.transactions.get(second.sessionId)?.status).toBe('draft');
      expect(paddle.transactions.get(third.sessionId)?.status).toBe('draft');
      expect(
        warnings(
          'a given-up checkout stays payable at the provider (paid, or not cancelable yet)',
        ),
      ).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            provider: 'paddle',
            session: second.sessionId,
            organization: orgId,
          }),
        ]),
      );
      expect(
        (await checkoutsOfOrg(orgId)).map((row) => [row.seats, row.status]),
      ).toEqual([
        [3, 'expired'],
        [5, 'expired'],
        [6, 'pending'],
      ]);
    });

    it('gives up another admin’s checkout of the organization once the hour is over, at its provider too', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const admin = await addMember(orgId, 'admin');
      const first = await startOrgCheckout(owner, orgId, 'stripe', 2);
      const body = {
        planId: 'team',
        provider: 'paddle',
        organizationId: orgId,
        seats: 2,
      };
      expect((await checkout(admin, body).expect(409)).body.code).toBe(
        'conflict',
      );

      await sql(
        `UPDATE "Checkout" SET "createdAt" = now() - interval '61 minutes' WHERE id = $1`,
        [first.checkoutId],
      );
      const before = stripe.expirations().length;
      await checkout(admin, body).expect(201);
      expect(
        stripe
          .expirations()
          .slice(before)
          .map((request) => request.path),
      ).toEqual([`/v1/checkout/sessions/${first.sessionId}/expire`]);
      expect(
        (await checkoutsOfOrg(orgId)).map((row) => [row.userId, row.status]),
      ).toEqual([
        [owner.id, 'expired'],
        [admin.id, 'pending'],
      ]);
    });

    it('refuses fewer seats than the organization has members (409 seats_exhausted), calling no provider', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      for (let added = 0; added < 3; added++) await addMember(orgId, 'member');
      const calls = providerCalls();
      const body = { planId: 'team', organizationId: orgId };

      const one = await checkout(owner, {
        ...body,
        provider: 'stripe',
        seats: 1,
      }).expect(409);
      expect(one.body.code).toBe('seats_exhausted');
      expect(one.body.detail).toMatch(/4 members/);
      expect(one.body.errors).toEqual([
        expect.objectContaining({ field: 'seats', code: 'below_member_count' }),
      ]);
      // Without seats, one seat is what would be bought.
      const implicit = await checkout(owner, {
        ...body,
        provider: 'paddle',
      }).expect(409);
      expect(implicit.body.code).toBe('seats_exhausted');
      expect(providerCalls()).toBe(calls);
      expect(await checkoutsOfOrg(orgId)).toEqual([]);

      await checkout(owner, { ...body, provider: 'stripe', seats: 4 }).expect(
        201,
      );
    });

    it('refuses members who are not admins (403), non-members (404), other plans, and seats without an organization, calling no provider', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const member = await addMember(orgId, 'member');
      const stranger = await registerUser(t.http);
      const admin = await addMember(orgId, 'admin');
      const calls = providerCalls();
      const body = {
        planId: 'team',
        provider: 'stripe',
        organizationId: orgId,
        seats: 2,
      };

      const asMember = await checkout(member, body).expect(403);
      expect(asMember.body.code).toBe('org_role_required');
      const asStranger = await checkout(stranger, body).expect(404);
      expect(asStranger.body.code).toBe('not_found');
      const missing = await checkout(owner, {
        ...body,
        organizationId: randomUUID(),
      }).expect(404);
      expect(missing.body.code).toBe('not_found');

      const pro = await checkout(admin, { ...body, planId: 'pro' }).expect(400);
      expect(pro.body.code).toBe('plan_not_for_organizations');
      expect(pro.body.errors).toEqual([
        expect.objectContaining({ field: 'planId' }),
      ]);
      const enterprise = await checkout(owner, {
        ...body,
        planId: 'enterprise',
      }).expect(400);
      expect(enterprise.body.code).toBe('plan_not_checkoutable');

      const personalSeats = await checkout(owner, {
        planId: 'team',
        provider: 'stripe',
        seats: 2,
      }).expect(400);
      expect(personalSeats.body.code).toBe('validation_failed');
      expect(personalSeats.body.errors).toEqual([
        expect.objectContaining({ field: 'seats' }),
      ]);
      for (const seats of [0, 1001, 2.5, '3']) {
        const res = await checkout(owner, { ...body, seats }).expect(400);
        expect(res.body.errors).toEqual(
          expect.arrayContaining([expect.objectContaining({ field: 'seats' })]),
        );
      }
      const notUuid = await checkout(owner, {
        ...body,
        organizationId: 'acme',
      }).expect(400);
      expect(notUuid.body.errors).toEqual([
        expect.objectContaining({ field: 'organizationId' }),
      ]);

      expect(providerCalls()).toBe(calls);
      expect(await checkoutsOfOrg(orgId)).toEqual([]);
    });
  });

  describe('Stripe', () => {
    it('activates the organization’s plan and seats from the verified webhook; a forged signature changes nothing', async () => {
      const purchase = await stripeOrg(3);
      const { owner, orgId, completed } = purchase;

      const forged = await deliver(
        t,
        'stripe',
        completed,
        stripeSignature(completed, { secret: 'whsec_someone_else' }),
      ).expect(400);
      expect(forged.body.code).toBe('webhook_signature_invalid');
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'free' },
        seats: 0,
      });
      expect(await poolLimit(owner, orgId)).toBe(0);
      expect(
        await sql('SELECT 1 FROM "Subscription" WHERE "organizationId" = $1', [
          orgId,
        ]),
      ).toEqual([]);

      await deliver(t, 'stripe', completed).expect(200);
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'team', name: 'Team' },
        seats: 3,
      });
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 3);
      expect(await orgRow(orgId)).toMatchObject({
        planSetByAdmin: false,
        planSubscriptionId: expect.any(String),
      });
      const [subscription] = await sql<{
        seats: number;
        userId: string;
        planCode: string;
      }>(
        'SELECT seats, "userId"::text AS "userId", "planCode" FROM "Subscription" WHERE "organizationId" = $1',
        [orgId],
      );
      expect(subscription).toEqual({
        seats: 3,
        userId: owner.id,
        planCode: 'team',
      });
      // The buyer's own plan is not what they bought for the organization.
      expect(
        (
          await t.http
            .get('/v1/billing/subscription')
            .set('Cookie', owner.cookie)
            .expect(200)
        ).body,
      ).toMatchObject({ plan: { code: 'free' }, status: 'none' });
      expect(await auditOf(orgId)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            action: 'org.plan.grant',
            adminId: null,
            before: expect.objectContaining({ planCode: 'free', seats: 0 }),
            after: expect.objectContaining({ planCode: 'team', seats: 3 }),
          }),
        ]),
      );

      // A renewing subscription is not bought twice.
      const again = await checkout(owner, {
        planId: 'team',
        provider: 'paddle',
        organizationId: orgId,
        seats: 5,
      }).expect(409);
      expect(again.body.code).toBe('subscription_exists');
    });

    it('changes the seats at Stripe with proration, and only the confirming webhook changes the pool', async () => {
      const { owner, orgId, subscriptionId, fields, created } =
        await activeStripeOrg(2);
      const updatesBefore = stripe.updates().length;

      const res = await changeSeats(owner, orgId, { seats: 5 }).expect(202);
      expect(res.body).toEqual({
        seats: 5,
        status: 'pending',
        currentSeats: 2,
        provider: 'stripe',
      });
      const updates = stripe.updates().slice(updatesBefore);
      expect(updates).toHaveLength(1);
      expect(updates[0].path).toBe(`/v1/subscriptions/${subscriptionId}`);
      expect(FakeStripe.fields(updates[0])).toEqual({
        'items[0][id]': 'si_1',
        'items[0][quantity]': '5',
        proration_behavior: 'always_invoice',
        payment_behavior: 'pending_if_incomplete',
      });

      // Accepted by Stripe, not confirmed yet: nothing of ours changed.
      expect((await orgOf(owner, orgId)).seats).toBe(2);
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 2);

      // Stripe's customer.subscription.updated carries the subscription as it now is.
      const now = stripe.subscriptions.get(subscriptionId)!;
      expect(
        (now.items as { data: { quantity: number }[] }).data[0].quantity,
      ).toBe(5);
      await deliver(
        t,
        'stripe',
        stripeEvent('customer.subscription.updated', now, {
          created: created + 10,
        }),
      ).expect(200);
      expect((await orgOf(owner, orgId)).seats).toBe(5);
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 5);

      // A late copy of an older event does not take the seats back.
      await deliver(
        t,
        'stripe',
        stripeEvent(
          'customer.subscription.updated',
          stripeSubscription({ ...fields, quantity: 2 }),
          { created: created + 5 },
        ),
      ).expect(200);
      expect((await orgOf(owner, orgId)).seats).toBe(5);

      const audit = await auditOf(orgId);
      expect(audit).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            action: 'org.seats.request',
            adminId: owner.id,
            before: { seats: 2 },
            after: expect.objectContaining({ seats: 5 }),
          }),
          expect.objectContaining({
            action: 'org.seats.change',
            adminId: null,
            before: expect.objectContaining({ seats: 2 }),
            after: expect.objectContaining({ seats: 5 }),
          }),
        ]),
      );
    });

    it('grants a seat increase only once it is paid: a declined charge leaves it in Stripe’s pending_update and the pool as it was', async () => {
      const { owner, orgId, subscriptionId, created } =
        await activeStripeOrg(2);
      stripe.declinePayments = true;
      const updatesBefore = stripe.updates().length;
      await changeSeats(owner, orgId, { seats: 5 }).expect(202);
      // Stripe's customer.subscription.updated carries the subscription as it now is.
      const unpaid = stripe.subscriptions.get(subscriptionId)!;
      await deliver(
        t,
        'stripe',
        stripeEvent('customer.subscription.updated', unpaid, {
          created: created + 10,
        }),
      ).expect(200);
      expect((await orgOf(owner, orgId)).seats).toBe(2);
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 2);
      // Stripe kept the paid quantity on the item and holds the new one until its invoice is paid.
      expect(
        (unpaid.items as { data: { quantity: number }[] }).data[0].quantity,
      ).toBe(2);
      expect(unpaid.pending_update).toMatchObject({
        subscription_items: [expect.objectContaining({ quantity: 5 })],
      });
      const [update] = stripe.updates().slice(updatesBefore);
      expect(FakeStripe.fields(update)).toMatchObject({
        proration_behavior: 'always_invoice',
        payment_behavior: 'pending_if_incomplete',
      });

      // The customer fixes their card: the invoice is paid and Stripe applies the update.
      const paid = stripe.payPendingUpdate(subscriptionId);
      await deliver(
        t,
        'stripe',
        stripeEvent('customer.subscription.pending_update_applied', paid, {
          created: created + 20,
        }),
      ).expect(200);
      expect((await orgOf(owner, orgId)).seats).toBe(5);
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 5);

      // A decrease is a credit: nothing to pay, it applies at once.
      await changeSeats(owner, orgId, { seats: 3 }).expect(202);
      await deliver(
        t,
        'stripe',
        stripeEvent(
          'customer.subscription.updated',
          stripe.subscriptions.get(subscriptionId)!,
          { created: created + 30 },
        ),
      ).expect(200);
      expect((await orgOf(owner, orgId)).seats).toBe(3);
    });

    it('refuses seat changes below the member count, by members, by strangers and without a subscription', async () => {
      const { owner, orgId } = await activeStripeOrg(3);
      const member = await addMember(orgId, 'member');
      await addMember(orgId, 'admin');
      const stranger = await registerUser(t.http);
      const calls = providerCalls();

      const below = await changeSeats(owner, orgId, { seats: 2 }).expect(409);
      expect(below.body.code).toBe('seats_exhausted');
      const byMember = await changeSeats(member, orgId, { seats: 4 }).expect(
        403,
      );
      expect(byMember.body.code).toBe('org_role_required');
      await changeSeats(stranger, orgId, { seats: 4 }).expect(404);
      for (const body of [{ seats: 0 }, { seats: 1001 }, {}, { seats: 'x' }]) {
        const res = await changeSeats(owner, orgId, body).expect(400);
        expect(res.body.errors).toEqual(
          expect.arrayContaining([expect.objectContaining({ field: 'seats' })]),
        );
      }
      const unpaid = await registerUser(t.http);
      const unpaidOrg = await createOrg(unpaid);
      const none = await changeSeats(unpaid, unpaidOrg, { seats: 2 }).expect(
        404,
      );
      expect(none.body.code).toBe('not_found');
      expect(providerCalls()).toBe(calls);
      expect((await orgOf(owner, orgId)).seats).toBe(3);
    });

    it('answers 502 and changes nothing when Stripe refuses the seat change', async () => {
      const { owner, orgId } = await activeStripeOrg(2);
      const auditBefore = (await auditOf(orgId)).length;
      stripe.failWith = 500;
      const res = await changeSeats(owner, orgId, { seats: 4 }).expect(502);
      expect(res.body.code).toBe('payment_provider_error');
      expect((await orgOf(owner, orgId)).seats).toBe(2);
      expect(await auditOf(orgId)).toHaveLength(auditBefore);
    });

    it('returns the organization to Free with no seats when the subscription is deleted; the members stay', async () => {
      const { owner, orgId, fields, created } = await activeStripeOrg(3);
      await addMember(orgId, 'member');
      await deliver(
        t,
        'stripe',
        stripeEvent(
          'customer.subscription.deleted',
          stripeSubscription({
            ...fields,
            status: 'canceled',
            canceledAt: created + 20,
          }),
          { created: created + 20 },
        ),
      ).expect(200);
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'free' },
        seats: 0,
        memberCount: 2,
      });
      expect(await poolLimit(owner, orgId)).toBe(0);
      expect(await orgRow(orgId)).toMatchObject({ planSubscriptionId: null });
      expect(await auditOf(orgId)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            action: 'org.plan.lapse',
            adminId: null,
            after: expect.objectContaining({ planCode: 'free', seats: 0 }),
          }),
        ]),
      );
    });

    it('cancels at Stripe a purchase paid after its organization was deleted', async () => {
      const { owner, orgId, subscriptionId, completed } = await stripeOrg(2);
      await t.http
        .delete(`/v1/orgs/${orgId}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      const canceledBefore = stripe.cancellations().length;
      await deliver(t, 'stripe', completed).expect(200);
      expect(
        stripe
          .cancellations()
          .slice(canceledBefore)
          .map((request) => request.path),
      ).toEqual([`/v1/subscriptions/${subscriptionId}`]);
      const [row] = await sql<{ status: string }>(
        'SELECT status::text FROM "Subscription" WHERE "providerSubscriptionId" = $1',
        [subscriptionId],
      );
      expect(row.status).toBe('canceled');
    });

    it('keeps the plan until the period ends when canceled at period end, then the sweeper lapses it', async () => {
      const periodEnd = inDays(10);
      const { owner, orgId, fields, created } = await activeStripeOrg(
        2,
        periodEnd,
      );
      await deliver(
        t,
        'stripe',
        stripeEvent(
          'customer.subscription.updated',
          stripeSubscription({ ...fields, cancelAtPeriodEnd: true }),
          { created: created + 5 },
        ),
      ).expect(200);
      expect((await orgOf(owner, orgId)).plan.code).toBe('team');
      expect(await sweepAt(new Date(periodEnd.getTime() - 1000))).not.toContain(
        orgId,
      );
      expect(await sweepAt(new Date(periodEnd.getTime() + 1000))).toContain(
        orgId,
      );
      jest.restoreAllMocks();
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'free' },
        seats: 0,
      });
    });
  });

  describe('Paddle', () => {
    it('grants the seats the buyer paid for when they changed the quantity on Paddle’s checkout', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const { checkoutId, sessionId } = await startOrgCheckout(
        owner,
        orgId,
        'paddle',
        2,
      );
      const subscriptionId = `sub_${randomUUID().replace(/-/g, '').slice(0, 26)}`;
      const periodEnd = inDays(30);
      await deliver(
        t,
        'paddle',
        paddleEvent(
          'transaction.completed',
          paddleTransaction({
            id: sessionId,
            subscriptionId,
            checkoutId,
            periodEnd,
            quantity: 5,
          }),
        ),
      ).expect(200);
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'team' },
        seats: 5,
      });
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 5);
    });

    it('activates from the completed transaction, changes the seats with prorated billing, follows the confirmation and lapses on cancel', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const { checkoutId, sessionId } = await startOrgCheckout(
        owner,
        orgId,
        'paddle',
        2,
      );
      const subscriptionId = `sub_${randomUUID().replace(/-/g, '').slice(0, 26)}`;
      const periodEnd = inDays(30);
      const start = new Date();
      const fields = {
        id: subscriptionId,
        status: 'active',
        periodEnd,
        checkoutId,
        transactionId: sessionId,
        organizationId: orgId,
        quantity: 2,
        priceId: 'pri_team_seat',
      };
      paddle.subscriptions.set(subscriptionId, paddleSubscription(fields));

      // The transaction does not tell the quantity: the checkout's seats are what was bought.
      await deliver(
        t,
        'paddle',
        paddleEvent(
          'transaction.completed',
          paddleTransaction({
            id: sessionId,
            subscriptionId,
            checkoutId,
            periodEnd,
          }),
          { occurredAt: start },
        ),
      ).expect(200);
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'team' },
        seats: 2,
      });
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 2);

      const updatesBefore = paddle.updates().length;
      await changeSeats(owner, orgId, { seats: 4 }).expect(202);
      const updates = paddle.updates().slice(updatesBefore);
      expect(updates).toHaveLength(1);
      expect(updates[0].path).toBe(`/subscriptions/${subscriptionId}`);
      expect(JSON.parse(updates[0].body)).toEqual({
        items: [{ price_id: 'pri_team_seat', quantity: 4 }],
        proration_billing_mode: 'prorated_immediately',
        on_payment_failure: 'prevent_change',
      });
      expect((await orgOf(owner, orgId)).seats).toBe(2);

      const updated = paddle.subscriptions.get(subscriptionId)!;
      await deliver(
        t,
        'paddle',
        paddleEvent('subscription.updated', updated, {
          occurredAt: new Date(start.getTime() + 5000),
        }),
      ).expect(200);
      expect((await orgOf(owner, orgId)).seats).toBe(4);
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 4);

      await deliver(
        t,
        'paddle',
        paddleEvent(
          'subscription.canceled',
          paddleSubscription({
            ...fields,
            quantity: 4,
            status: 'canceled',
            canceledAt: new Date(start.getTime() + 10_000),
          }),
          { occurredAt: new Date(start.getTime() + 10_000) },
        ),
      ).expect(200);
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'free' },
        seats: 0,
      });
      expect(await poolLimit(owner, orgId)).toBe(0);
      expect((await auditOf(orgId)).map((entry) => entry.action)).toEqual(
        expect.arrayContaining([
          'org.plan.grant',
          'org.seats.request',
          'org.seats.change',
          'org.plan.lapse',
        ]),
      );
    });
  });

  describe('one renewing subscription per organization', () => {
    /** A subscription of the organization's checkout as Stripe has it once paid. */
    function paidAtStripe(
      owner: User,
      orgId: string,
      purchase: { checkoutId: string; sessionId: string },
      seats: number,
    ) {
      const subscriptionId = `sub_${randomUUID().slice(0, 12)}`;
      stripe.subscriptions.set(
        subscriptionId,
        stripeSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd: seconds(inDays(30)),
          checkoutId: purchase.checkoutId,
          userId: owner.id,
          organizationId: orgId,
          planCode: 'team',
          quantity: seats,
        }),
      );
      return {
        subscriptionId,
        completed: (created: number) =>
          stripeEvent(
            'checkout.session.completed',
            stripeCheckoutSession(
              purchase.sessionId,
              subscriptionId,
              purchase.checkoutId,
            ),
            { created },
          ),
      };
    }

    it('cancels at Stripe a second subscription paid while the first renews: the first is kept, audited and logged for a refund', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const first = await startOrgCheckout(owner, orgId, 'stripe', 3);
      // Paid in one tab, its webhook not there yet, when another order opens: Stripe cannot expire a paid session.
      stripe.completeSession(first.sessionId);
      const second = await startOrgCheckout(owner, orgId, 'stripe', 5);
      expect(stripe.sessions.get(first.sessionId)?.status).toBe('complete');
      const paidFirst = paidAtStripe(owner, orgId, first, 3);
      const paidSecond = paidAtStripe(owner, orgId, second, 5);
      const created = seconds(new Date());

      await deliver(t, 'stripe', paidFirst.completed(created)).expect(200);
      const canceledBefore = stripe.cancellations().length;
      await deliver(t, 'stripe', paidSecond.completed(created + 1)).expect(200);
      expect(
        stripe
          .cancellations()
          .slice(canceledBefore)
          .map((request) => request.path),
      ).toEqual([`/v1/subscriptions/${paidSecond.subscriptionId}`]);
      const subscriptions = await subscriptionsOfOrg(orgId);
      expect(
        subscriptions.map((row) => [
          row.providerSubscriptionId,
          row.status,
          row.seats,
        ]),
      ).toEqual([
        [paidFirst.subscriptionId, 'active', 3],
        [paidSecond.subscriptionId, 'canceled', 5],
      ]);
      expect(await orgRow(orgId)).toMatchObject({
        planCode: 'team',
        seats: 3,
        planSubscriptionId: subscriptions[0].id,
      });
      expect(await poolLimit(owner, orgId)).toBe(teamCredits * 3);
      expect(await auditOf(orgId)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            action: 'org.subscription.cancel_second',
            adminId: null,
            before: {
              renewing: {
                subscriptionId: subscriptions[0].id,
                provider: 'stripe',
                providerSubscriptionId: paidFirst.subscriptionId,
                seats: 3,
              },
            },
            after: {
              canceled: {
                provider: 'stripe',
                providerSubscriptionId: paidSecond.subscriptionId,
                seats: 5,
              },
            },
            reason: expect.stringMatching(/refunded by hand/),
          }),
        ]),
      );
      expect(
        warnings(
          'second renewing subscription of an organization canceled at the provider: refund its payment by hand',
        ),
      ).toEqual([
        expect.objectContaining({
          provider: 'stripe',
          subscription: paidSecond.subscriptionId,
          organization: orgId,
        }),
      ]);

      // A late event from before the cancellation changes nothing, and asks Stripe nothing more.
      const calls = stripe.requests.length;
      await deliver(
        t,
        'stripe',
        stripeEvent(
          'customer.subscription.updated',
          stripeSubscription({
            id: paidSecond.subscriptionId,
            status: 'active',
            periodEnd: seconds(inDays(30)),
            checkoutId: second.checkoutId,
            quantity: 5,
          }),
          { created: created + 2 },
        ),
      ).expect(200);
      expect(stripe.requests.length).toBe(calls);
      expect((await orgRow(orgId)).seats).toBe(3);
    });

    it('cancels at Paddle a second subscription when a replaced draft transaction was paid after all', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const first = await startOrgCheckout(owner, orgId, 'paddle', 3);
      const second = await startOrgCheckout(owner, orgId, 'paddle', 5);
      // A draft: Paddle did not cancel it.
      expect(paddle.transactions.get(first.sessionId)?.status).toBe('draft');
      const start = new Date();
      const paid = (
        purchase: { checkoutId: string; sessionId: string },
        seats: number,
        at: Date,
      ) => {
        const subscriptionId = `sub_${randomUUID().replace(/-/g, '').slice(0, 26)}`;
        paddle.subscriptions.set(
          subscriptionId,
          paddleSubscription({
            id: subscriptionId,
            status: 'active',
            periodEnd: inDays(30),
            checkoutId: purchase.checkoutId,
            transactionId: purchase.sessionId,
            organizationId: orgId,
            quantity: seats,
          }),
        );
        return {
          subscriptionId,
          event: paddleEvent(
            'transaction.completed',
            paddleTransaction({
              id: purchase.sessionId,
              subscriptionId,
              checkoutId: purchase.checkoutId,
              periodEnd: inDays(30),
            }),
            { occurredAt: at },
          ),
        };
      };
      const paidSecond = paid(second, 5, start);
      const paidFirst = paid(first, 3, new Date(start.getTime() + 1000));

      await deliver(t, 'paddle', paidSecond.event).expect(200);
      expect((await orgRow(orgId)).seats).toBe(5);
      const canceledBefore = paddle.cancellations().length;
      await deliver(t, 'paddle', paidFirst.event).expect(200);
      const canceled = paddle.cancellations().slice(canceledBefore);
      expect(canceled.map((request) => request.path)).toEqual([
        `/subscriptions/${paidFirst.subscriptionId}/cancel`,
      ]);
      expect(JSON.parse(canceled[0].body)).toEqual({
        effective_from: 'immediately',
      });
      const subscriptions = await subscriptionsOfOrg(orgId);
      expect(
        subscriptions.map((row) => [row.providerSubscriptionId, row.status]),
      ).toEqual([
        [paidSecond.subscriptionId, 'active'],
        [paidFirst.subscriptionId, 'canceled'],
      ]);
      expect(await orgRow(orgId)).toMatchObject({
        seats: 5,
        planSubscriptionId: subscriptions[0].id,
      });
      expect(
        (await auditOf(orgId)).filter(
          (entry) => entry.action === 'org.subscription.cancel_second',
        ),
      ).toHaveLength(1);
    });

    it('keeps one subscription when two purchases of an organization are confirmed at the same time', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const first = await startOrgCheckout(owner, orgId, 'stripe', 2);
      stripe.completeSession(first.sessionId);
      const second = await startOrgCheckout(owner, orgId, 'stripe', 4);
      const purchases = [
        paidAtStripe(owner, orgId, first, 2),
        paidAtStripe(owner, orgId, second, 4),
      ];
      const created = seconds(new Date());
      const events = purchases.map((purchase) => purchase.completed(created));
      const canceledBefore = stripe.cancellations().length;

      // A delivery that lost the race is refused (503) and delivered again, as Stripe would.
      let statuses = (
        await Promise.all(events.map((event) => deliver(t, 'stripe', event)))
      ).map((res) => res.status);
      for (let round = 0; round < 3 && statuses.includes(503); round++)
        statuses = await Promise.all(
          events.map(async (event, index) =>
            statuses[index] === 503
              ? (await deliver(t, 'stripe', event)).status
              : statuses[index],
          ),
        );
      expect(statuses).toEqual([200, 200]);

      const subscriptions = await subscriptionsOfOrg(orgId);
      const live = subscriptions.filter((row) => row.status === 'active');
      const gone = subscriptions.filter((row) => row.status === 'canceled');
      expect(live).toHaveLength(1);
      expect(gone).toHaveLength(1);
      expect(
        stripe
          .cancellations()
          .slice(canceledBefore)
          .map((request) => request.path),
      ).toEqual([`/v1/subscriptions/${gone[0].providerSubscriptionId}`]);
      expect(await orgRow(orgId)).toMatchObject({
        seats: live[0].seats,
        planSubscriptionId: live[0].id,
      });
    });
  });

  describe('organization ids', () => {
    it('matches an id sent upper-case as stored: checkout metadata, seat-change and admin-plan audit entries', async () => {
      const { owner, orgId } = await activeStripeOrg(2);
      const upper = orgId.toUpperCase();
      expect(upper).not.toBe(orgId);

      await changeSeats(owner, upper, { seats: 4 }).expect(202);
      const res = await t.http
        .put(`/v1/admin/orgs/${upper}/plan`)
        .set('Cookie', root.cookie)
        .send({ planCode: 'enterprise', seats: 10 })
        .expect(200);
      expect(res.body.id).toBe(orgId);
      expect((await auditOf(orgId)).map((entry) => entry.action)).toEqual(
        expect.arrayContaining(['org.seats.request', 'org.plan']),
      );
      expect(
        await sql('SELECT 1 FROM "AuditLog" WHERE "targetId" = $1', [upper]),
      ).toEqual([]);

      const buyer = await registerUser(t.http);
      const otherOrg = await createOrg(buyer);
      const before = stripe.creations().length;
      await checkout(buyer, {
        planId: 'team',
        provider: 'stripe',
        organizationId: otherOrg.toUpperCase(),
        seats: 1,
      }).expect(201);
      expect(FakeStripe.fields(stripe.creations()[before])).toMatchObject({
        'metadata[organizationId]': otherOrg,
        'subscription_data[metadata][organizationId]': otherOrg,
      });
    });
  });

  describe('admin', () => {
    it('refuses the admin routes to non-admins, org owners included', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      const list = await t.http
        .get('/v1/admin/orgs')
        .set('Cookie', owner.cookie)
        .expect(403);
      expect(list.body.code).toBe('forbidden');
      await t.http
        .put(`/v1/admin/orgs/${orgId}/plan`)
        .set('Cookie', owner.cookie)
        .send({ planCode: 'enterprise', seats: 50 })
        .expect(403);
      expect((await orgRow(orgId)).planCode).toBe('free');
    });

    it('lists organizations with plan, seats and member count, searchable by name and paged', async () => {
      const owner = await registerUser(t.http);
      const marker = randomUUID().slice(0, 8);
      const ids: string[] = [];
      for (const label of ['one', 'two', 'three']) {
        const res = await t.http
          .post('/v1/orgs')
          .set('Cookie', owner.cookie)
          .send({ name: `Acme ${marker} ${label}` })
          .expect(201);
        ids.push(res.body.id as string);
      }
      await addMember(ids[0], 'member');
      const page = await t.http
        .get(`/v1/admin/orgs?name=${marker.toUpperCase()}&limit=2`)
        .set('Cookie', root.cookie)
        .expect(200);
      expect(page.body.data).toHaveLength(2);
      expect(page.body.data[0]).toEqual({
        id: ids[2],
        name: `Acme ${marker} three`,
        planCode: 'free',
        seats: 0,
        memberCount: 1,
        planSetByAdmin: false,
        createdAt: expect.any(String),
      });
      const rest = await t.http
        .get(`/v1/admin/orgs?name=${marker}&cursor=${page.body.nextCursor}`)
        .set('Cookie', root.cookie)
        .expect(200);
      expect(rest.body.data).toEqual([
        expect.objectContaining({ id: ids[0], memberCount: 2 }),
      ]);
      expect(rest.body.nextCursor).toBeNull();
    });

    it('sets Enterprise with seats (audited), refusing unknown organizations and plans and too few seats', async () => {
      const owner = await registerUser(t.http);
      const orgId = await createOrg(owner);
      await addMember(orgId, 'member');
      const put = (id: string, body: Record<string, unknown>) =>
        t.http
          .put(`/v1/admin/orgs/${id}/plan`)
          .set('Cookie', root.cookie)
          .send(body);

      const res = await put(orgId, {
        planCode: 'enterprise',
        seats: 50,
        reason: 'contract 42',
      }).expect(200);
      expect(res.body).toMatchObject({
        id: orgId,
        planCode: 'enterprise',
        seats: 50,
        memberCount: 2,
        planSetByAdmin: true,
      });
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'enterprise' },
        seats: 50,
      });
      expect(await poolLimit(owner, orgId)).toBe(enterpriseCredits * 50);
      const [entry] = (await auditOf(orgId)).filter(
        (row) => row.action === 'org.plan',
      );
      expect(entry).toEqual({
        action: 'org.plan',
        adminId: root.id,
        before: {
          planCode: 'free',
          seats: 0,
          planSubscriptionId: null,
          planSetByAdmin: false,
        },
        after: {
          planCode: 'enterprise',
          seats: 50,
          planSubscriptionId: null,
          planSetByAdmin: true,
        },
        reason: 'contract 42',
      });

      const auditCount = (await auditOf(orgId)).length;
      expect(
        (
          await put(randomUUID(), { planCode: 'enterprise', seats: 5 }).expect(
            404,
          )
        ).body.code,
      ).toBe('not_found');
      await put('not-an-id', { planCode: 'enterprise', seats: 5 }).expect(404);
      const unknown = await put(orgId, {
        planCode: 'platinum',
        seats: 5,
      }).expect(400);
      expect(unknown.body.errors).toEqual([
        expect.objectContaining({ field: 'planCode' }),
      ]);
      const tooFew = await put(orgId, {
        planCode: 'enterprise',
        seats: 1,
      }).expect(409);
      expect(tooFew.body.code).toBe('seats_exhausted');
      for (const body of [
        { planCode: 'enterprise', seats: 100_001 },
        { planCode: 'enterprise', seats: -1 },
        { planCode: 'enterprise' },
        { planCode: 'free', seats: 3 },
      ]) {
        const bad = await put(orgId, body).expect(400);
        expect(
          (bad.body.errors as { field: string }[]).map((error) => error.field),
        ).toEqual(expect.arrayContaining(['seats']));
        expect(
          (bad.body.errors as { field: string }[]).every(
            (error) => error.field === 'seats',
          ),
        ).toBe(true);
      }
      expect(await orgRow(orgId)).toMatchObject({
        planCode: 'enterprise',
        seats: 50,
      });
      expect(await auditOf(orgId)).toHaveLength(auditCount);

      await put(orgId, { planCode: 'free', seats: 0 }).expect(200);
      expect(await poolLimit(owner, orgId)).toBe(0);
    });

    it('keeps a plan an admin set through renewals, seat changes and the end of the subscription; the same plan and seats hand it back to billing', async () => {
      const { owner, orgId, fields, created } = await activeStripeOrg(3);
      const put = (body: Record<string, unknown>) =>
        t.http
          .put(`/v1/admin/orgs/${orgId}/plan`)
          .set('Cookie', root.cookie)
          .send(body)
          .expect(200);

      await put({ planCode: 'enterprise', seats: 40 });
      await deliver(
        t,
        'stripe',
        stripeEvent(
          'customer.subscription.updated',
          stripeSubscription({
            ...fields,
            quantity: 6,
            periodEnd: seconds(inDays(60)),
          }),
          { created: created + 10 },
        ),
      ).expect(200);
      expect(await orgRow(orgId)).toMatchObject({
        planCode: 'enterprise',
        seats: 40,
        planSetByAdmin: true,
      });
      expect(await sweepAt(inDays(90))).not.toContain(orgId);
      jest.restoreAllMocks();

      // The subscription's own plan and its confirmed seats: billing manages the organization again.
      await put({ planCode: 'team', seats: 6 });
      expect(await orgRow(orgId)).toMatchObject({
        planCode: 'team',
        seats: 6,
        planSetByAdmin: false,
        planSubscriptionId: expect.any(String),
      });
      await deliver(
        t,
        'stripe',
        stripeEvent(
          'customer.subscription.deleted',
          stripeSubscription({
            ...fields,
            quantity: 6,
            status: 'canceled',
            canceledAt: created + 20,
          }),
          { created: created + 20 },
        ),
      ).expect(200);
      expect(await orgOf(owner, orgId)).toMatchObject({
        plan: { code: 'free' },
        seats: 0,
      });
    });
  });
});
