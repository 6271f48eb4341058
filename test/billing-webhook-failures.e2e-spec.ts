import { randomUUID } from 'node:crypto';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import {
  paddleEvent,
  paddleTransaction,
  stripeCheckoutSession,
  stripeEvent,
  stripeSubscription,
} from './support/billing-events';
import {
  billingEnv,
  deliver,
  inDays,
  planOf,
  providerSessionOf,
  seconds,
} from './support/billing';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { createMigratedDatabase, testServerUrl } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;

/** Webhooks while the database fails: 5xx and nothing kept, then applied exactly once on redelivery. */
describe('webhooks while the database fails', () => {
  let database: ScratchDatabase;
  let t: TestApp;
  let stripe: FakeStripe;
  let paddle: FakePaddle;
  const onScratch = <T = Record<string, unknown>>(
    query: string,
    values: unknown[] = [],
  ) => sql<T>(query, values, database.url);
  const onServer = (query: string) => sql(query, [], testServerUrl());

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_billing_failures');
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    t = await bootTestApp({
      ...billingEnv(stripe, paddle),
      DATABASE_URL: database.url,
    });
  });
  afterAll(async () => {
    await onServer(
      `ALTER DATABASE "${database.name}" WITH ALLOW_CONNECTIONS true`,
    ).catch(() => undefined);
    await t.close();
    await stripe.close();
    await paddle.close();
    await database.drop();
  });

  async function stripeCompletion(user: User): Promise<string> {
    const res = await t.http
      .post('/v1/billing/checkout')
      .set('Cookie', user.cookie)
      .send({ planId: 'pro', provider: 'stripe' })
      .expect(201);
    const checkoutId = res.body.checkoutId as string;
    const subscriptionId = `sub_${randomUUID().slice(0, 12)}`;
    stripe.subscriptions.set(
      subscriptionId,
      stripeSubscription({
        id: subscriptionId,
        status: 'active',
        periodEnd: seconds(inDays(30)),
        checkoutId,
        userId: user.id,
      }),
    );
    return stripeEvent(
      'checkout.session.completed',
      stripeCheckoutSession(
        await providerSessionOf(checkoutId, database.url),
        subscriptionId,
        checkoutId,
      ),
    );
  }

  const eventCount = async (payload: string) => {
    const id = JSON.parse(payload) as { id?: string; event_id?: string };
    const [row] = await onScratch<{ count: number }>(
      'SELECT count(*)::int AS count FROM "WebhookEvent" WHERE "eventId" = $1',
      [id.id ?? id.event_id],
    );
    return row.count;
  };

  it('rolls back everything when a write fails mid-event, then applies the redelivery once', async () => {
    const user = await registerUser(t.http);
    const completed = await stripeCompletion(user);
    // The event row is written first; the subscription insert after it fails inside the same transaction.
    await onScratch(
      `CREATE FUNCTION fail_subscription_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full (simulated)'; END $$`,
    );
    await onScratch(
      `CREATE TRIGGER fail_subscription_insert BEFORE INSERT ON "Subscription" FOR EACH ROW EXECUTE FUNCTION fail_subscription_insert()`,
    );
    try {
      const failed = await deliver(t, 'stripe', completed).expect(503);
      expect(failed.body.code).toBe('webhook_not_processed');
      expect(failed.headers['retry-after']).toBe('60');
      expect(JSON.stringify(failed.body)).not.toMatch(
        /disk full|INSERT|Subscription/,
      );
      expect(t.rawLogs()).not.toMatch(/INSERT INTO/);
      expect(await eventCount(completed)).toBe(0);
      expect(await planOf(user.id, database.url)).toBe('free');
      const [checkout] = await onScratch<{ status: string }>(
        'SELECT status::text FROM "Checkout" WHERE "userId" = $1',
        [user.id],
      );
      expect(checkout.status).toBe('pending');
    } finally {
      await onScratch(
        'DROP TRIGGER fail_subscription_insert ON "Subscription"',
      );
      await onScratch('DROP FUNCTION fail_subscription_insert()');
    }

    expect((await deliver(t, 'stripe', completed).expect(200)).body).toEqual({
      received: true,
      duplicate: false,
    });
    expect((await deliver(t, 'stripe', completed).expect(200)).body).toEqual({
      received: true,
      duplicate: true,
    });
    expect(await planOf(user.id, database.url)).toBe('pro');
    expect(await eventCount(completed)).toBe(1);
    expect(
      await onScratch('SELECT 1 FROM "Subscription" WHERE "userId" = $1', [
        user.id,
      ]),
    ).toHaveLength(1);
  });

  it('answers 5xx while the database is unreachable, then applies the redelivery once', async () => {
    const user = await registerUser(t.http);
    const res = await t.http
      .post('/v1/billing/checkout')
      .set('Cookie', user.cookie)
      .send({ planId: 'pro', provider: 'paddle' })
      .expect(201);
    const transactionId = await providerSessionOf(
      res.body.checkoutId,
      database.url,
    );
    const completed = paddleEvent(
      'transaction.completed',
      paddleTransaction({
        id: transactionId,
        subscriptionId: `sub_${randomUUID().slice(0, 12)}`,
        checkoutId: res.body.checkoutId,
        periodEnd: inDays(30),
      }),
    );

    await onServer(
      `ALTER DATABASE "${database.name}" WITH ALLOW_CONNECTIONS false`,
    );
    await onServer(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database.name}' AND pid <> pg_backend_pid()`,
    );
    try {
      const failed = await deliver(t, 'paddle', completed);
      expect(failed.status).toBe(503);
      expect(failed.headers['content-type']).toMatch(
        /application\/problem\+json/,
      );
      // Any other route says the same, not a 500: the client's request was fine.
      const other = await t.http
        .get('/v1/billing/subscription')
        .set('Cookie', user.cookie);
      expect(other.status).toBe(503);
      expect(other.body.code).toBe('service_unavailable');
      expect(other.headers['retry-after']).toBe('5');
    } finally {
      await onServer(
        `ALTER DATABASE "${database.name}" WITH ALLOW_CONNECTIONS true`,
      );
    }
    expect(await eventCount(completed)).toBe(0);
    expect(await planOf(user.id, database.url)).toBe('free');

    // The provider delivers again (a fresh signature, as each Paddle attempt has).
    const redelivered = await deliver(t, 'paddle', completed);
    expect(redelivered.status).toBe(200);
    expect(redelivered.body).toEqual({ received: true, duplicate: false });
    expect(
      (await deliver(t, 'paddle', completed).expect(200)).body.duplicate,
    ).toBe(true);
    expect(await planOf(user.id, database.url)).toBe('pro');
    expect(await eventCount(completed)).toBe(1);
  });
});
