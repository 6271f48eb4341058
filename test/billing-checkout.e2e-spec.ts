import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import { billingEnv } from './support/billing';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;

describe('POST /v1/billing/checkout', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  let paddle: FakePaddle;
  let pro: {
    priceAmount: number;
    priceCurrency: string;
    priceInterval: string;
    name: string;
  };

  beforeAll(async () => {
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    t = await bootTestApp(billingEnv(stripe, paddle));
    [pro] = await sql(
      'SELECT "priceAmount", "priceCurrency", "priceInterval"::text AS "priceInterval", name FROM "Plan" WHERE code = $1',
      ['pro'],
    );
  });
  afterAll(async () => {
    await t.close();
    await stripe.close();
    await paddle.close();
  });
  afterEach(() => {
    stripe.delayMs = 0;
    paddle.delayMs = 0;
    stripe.failWith = null;
    paddle.failWith = null;
    stripe.reuseId = null;
  });

  const checkout = (user: User, body: Record<string, unknown>) =>
    t.http.post('/v1/billing/checkout').set('Cookie', user.cookie).send(body);
  const checkoutsOf = (user: User) =>
    sql<{
      id: string;
      status: string;
      amount: number;
      currency: string;
      providerSessionId: string | null;
    }>(
      'SELECT id::text, status::text, amount, currency, "providerSessionId" FROM "Checkout" WHERE "userId" = $1',
      [user.id],
    );
  const providerCalls = () =>
    stripe.creations().length + paddle.creations().length;

  it('opens a Stripe Checkout Session in subscription mode with the plan’s price and our references', async () => {
    const user = await registerUser(t.http);
    const before = stripe.creations().length;
    // The plan's `id` from GET /v1/plans is what checkout takes.
    const plans = (await t.http.get('/v1/plans').expect(200)).body.data as {
      id: string;
      name: string;
    }[];
    const listed = plans.find((plan) => plan.name === 'Pro');
    const res = await checkout(user, {
      planId: listed?.id,
      provider: 'stripe',
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
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][unit_amount]': String(pro.priceAmount),
      'line_items[0][price_data][currency]': pro.priceCurrency.toLowerCase(),
      'line_items[0][price_data][recurring][interval]': pro.priceInterval,
      'line_items[0][price_data][product_data][name]': pro.name,
      client_reference_id: res.body.checkoutId,
      customer_email: user.email,
      'metadata[checkoutId]': res.body.checkoutId,
      'metadata[userId]': user.id,
      'subscription_data[metadata][checkoutId]': res.body.checkoutId,
      'subscription_data[metadata][userId]': user.id,
    });
    expect(calls[0].headers['idempotency-key']).toBe(
      `checkout-${res.body.checkoutId}`,
    );
    expect(calls[0].headers.authorization).toBe('Bearer sk_test_fake_key');

    const [row] = await checkoutsOf(user);
    expect(row).toEqual({
      id: res.body.checkoutId,
      status: 'pending',
      amount: pro.priceAmount,
      currency: pro.priceCurrency,
      providerSessionId: expect.stringMatching(/^cs_test_/),
    });
    const [{ planCode }] = await sql<{ planCode: string }>(
      'SELECT "planCode" FROM "User" WHERE id = $1',
      [user.id],
    );
    expect(planCode).toBe('free');
  });

  it('opens a Paddle transaction with a non-catalog price built from the plan and our references', async () => {
    const user = await registerUser(t.http);
    const before = paddle.creations().length;
    const res = await checkout(user, {
      planId: 'pro',
      provider: 'paddle',
    }).expect(201);

    expect(res.body).toEqual({
      checkoutId: expect.any(String),
      provider: 'paddle',
      url: expect.stringMatching(
        /^https:\/\/pay\.paddle\.test\/checkout\?_ptxn=txn_/,
      ),
    });
    const calls = paddle.creations().slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0].path).toBe('/transactions');
    // The auth scheme is case-insensitive (RFC 9110); Paddle's SDK writes it in lower case.
    expect(calls[0].headers.authorization).toMatch(
      /^bearer pdl_sdbx_apikey_fake$/i,
    );
    expect(calls[0].headers['idempotency-key']).toBe(
      `checkout-${res.body.checkoutId}`,
    );
    const body = JSON.parse(calls[0].body);
    expect(body.items).toEqual([
      {
        quantity: 1,
        price: {
          name: pro.name,
          description: expect.any(String),
          unit_price: {
            amount: String(pro.priceAmount),
            currency_code: pro.priceCurrency,
          },
          billing_cycle: { interval: pro.priceInterval, frequency: 1 },
          product: { name: pro.name, tax_category: 'standard' },
        },
      },
    ]);
    expect(body.custom_data).toEqual({
      checkoutId: res.body.checkoutId,
      userId: user.id,
      planCode: 'pro',
    });
    const [row] = await checkoutsOf(user);
    expect(row).toMatchObject({
      status: 'pending',
      amount: pro.priceAmount,
      providerSessionId: expect.stringMatching(/^txn_/),
    });
  });

  it.each([
    'amount',
    'price',
    'currency',
    'interval',
    'unit_amount',
    'priceAmount',
  ])('refuses a client-sent %s field and calls no provider', async (field) => {
    const user = await registerUser(t.http);
    const before = providerCalls();
    const res = await checkout(user, {
      planId: 'pro',
      provider: 'stripe',
      [field]: field === 'currency' || field === 'interval' ? 'x' : 1,
    }).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    expect(providerCalls()).toBe(before);
    expect(await checkoutsOf(user)).toEqual([]);
  });

  it('refuses Free and Enterprise with plan_not_checkoutable, Enterprise pointing to sales, without a provider call', async () => {
    const user = await registerUser(t.http);
    const before = providerCalls();
    const free = await checkout(user, {
      planId: 'free',
      provider: 'stripe',
    }).expect(400);
    expect(free.body.code).toBe('plan_not_checkoutable');
    const enterprise = await checkout(user, {
      planId: 'enterprise',
      provider: 'paddle',
    }).expect(400);
    expect(enterprise.body.code).toBe('plan_not_checkoutable');
    expect(enterprise.body.detail).toMatch(/contact sales/i);
    expect(providerCalls()).toBe(before);
    expect(await checkoutsOf(user)).toEqual([]);
  });

  it('answers 404 for an unknown plan and 400 for an unknown provider or a missing field, without a provider call', async () => {
    const user = await registerUser(t.http);
    const before = providerCalls();
    expect(
      (
        await checkout(user, { planId: 'platinum', provider: 'stripe' }).expect(
          404,
        )
      ).body.code,
    ).toBe('not_found');
    const unknownProvider = await checkout(user, {
      planId: 'pro',
      provider: 'paypal',
    }).expect(400);
    expect(unknownProvider.body.errors).toEqual([
      expect.objectContaining({
        field: 'provider',
        message: expect.stringMatching(/stripe, paddle/),
      }),
    ]);
    expect(
      (await checkout(user, { planId: 'pro' }).expect(400)).body.errors,
    ).toEqual([expect.objectContaining({ field: 'provider' })]);
    const missingPlan = await checkout(user, { provider: 'stripe' }).expect(
      400,
    );
    expect(
      missingPlan.body.errors.map((error: { field: string }) => error.field),
    ).toEqual(expect.arrayContaining(['planId']));
    expect(
      (
        await checkout(user, { planId: ['pro'], provider: 'stripe' }).expect(
          400,
        )
      ).body.code,
    ).toBe('validation_failed');
    expect(providerCalls()).toBe(before);
    expect(await checkoutsOf(user)).toEqual([]);
  });

  it('requires a session', async () => {
    await t.http
      .post('/v1/billing/checkout')
      .send({ planId: 'pro', provider: 'stripe' })
      .expect(401);
  });

  it.each(['stripe', 'paddle'] as const)(
    'gives concurrent clicks one %s session: the same checkout and url',
    async (provider) => {
      const fake = provider === 'stripe' ? stripe : paddle;
      fake.delayMs = 300;
      const user = await registerUser(t.http);
      const before = fake.creations().length;
      const responses = await Promise.all(
        Array.from({ length: 5 }, () =>
          checkout(user, { planId: 'pro', provider }),
        ),
      );

      expect(responses.map((res) => res.status).sort()).toEqual([
        200, 200, 200, 200, 201,
      ]);
      expect(new Set(responses.map((res) => res.body.checkoutId)).size).toBe(1);
      expect(new Set(responses.map((res) => res.body.url)).size).toBe(1);
      expect(fake.creations().length - before).toBe(1);
      expect(await checkoutsOf(user)).toHaveLength(1);

      // A later click still finds the pending checkout; another plan or provider opens its own.
      const again = await checkout(user, { planId: 'pro', provider }).expect(
        200,
      );
      expect(again.body.checkoutId).toBe(responses[0].body.checkoutId);
      const team = await checkout(user, { planId: 'team', provider }).expect(
        201,
      );
      expect(team.body.checkoutId).not.toBe(again.body.checkoutId);
    },
  );

  it.each(['stripe', 'paddle'] as const)(
    'answers 502 when %s fails, keeps no pending checkout, and a retry opens a session',
    async (provider) => {
      const fake = provider === 'stripe' ? stripe : paddle;
      fake.failWith = 500;
      const user = await registerUser(t.http);
      const failed = await checkout(user, { planId: 'pro', provider }).expect(
        502,
      );
      expect(failed.body.code).toBe('payment_provider_error');
      expect(JSON.stringify(failed.body)).not.toMatch(
        /fake failure|sk_test|pdl_sdbx/,
      );
      expect((await checkoutsOf(user)).map((row) => row.status)).toEqual([
        'failed',
      ]);

      fake.failWith = null;
      await checkout(user, { planId: 'pro', provider }).expect(201);
      expect((await checkoutsOf(user)).map((row) => row.status).sort()).toEqual(
        ['failed', 'pending'],
      );
    },
  );

  it('holds no database connection while a provider is slow: other requests keep answering', async () => {
    stripe.delayMs = 1500;
    paddle.delayMs = 1500;
    const users = await Promise.all(
      Array.from({ length: 4 }, () => registerUser(t.http)),
    );
    const other = await registerUser(t.http);
    const checkouts = Promise.all(
      users.flatMap((user) =>
        ['pro', 'team'].flatMap((planId) =>
          (['stripe', 'paddle'] as const).map((provider) =>
            checkout(user, { planId, provider }),
          ),
        ),
      ),
    );
    await new Promise((done) => setTimeout(done, 300));
    const during = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.http.get('/v1/billing/subscription').set('Cookie', other.cookie),
      ),
    );
    expect(during.map((res) => res.status)).toEqual(Array(5).fill(200));
    expect((await checkouts).map((res) => res.status)).toEqual(
      Array(16).fill(201),
    );
  });

  it('gives up a pending checkout left without a URL by a request that died, after a minute', async () => {
    const user = await registerUser(t.http);
    const [row] = await sql<{ id: string }>(
      `INSERT INTO "Checkout" (id, "userId", "planCode", provider, status, amount, currency, interval, "createdAt")
       VALUES (gen_random_uuid(), $1, 'pro', 'stripe', 'pending', 2000, 'USD', 'month', now() - interval '61 seconds') RETURNING id::text`,
      [user.id],
    );
    const res = await checkout(user, {
      planId: 'pro',
      provider: 'stripe',
    }).expect(201);
    expect(res.body.checkoutId).not.toBe(row.id);
    expect(
      (await checkoutsOf(user)).find((checkoutRow) => checkoutRow.id === row.id)
        ?.status,
    ).toBe('expired');
  });

  it('answers 502 and keeps nothing when the provider hands out a session id another checkout already has', async () => {
    stripe.reuseId = `cs_test_reused_${Date.now()}`;
    const first = await registerUser(t.http);
    const second = await registerUser(t.http);
    await checkout(first, { planId: 'pro', provider: 'stripe' }).expect(201);
    expect(
      (
        await checkout(second, { planId: 'pro', provider: 'stripe' }).expect(
          502,
        )
      ).body.code,
    ).toBe('payment_provider_error');
    expect((await checkoutsOf(second)).map((row) => row.status)).toEqual([
      'failed',
    ]);
  });

  it('opens a new session once the pending checkout is older than an hour', async () => {
    const user = await registerUser(t.http);
    const first = await checkout(user, {
      planId: 'pro',
      provider: 'stripe',
    }).expect(201);
    await sql(
      `UPDATE "Checkout" SET "createdAt" = now() - interval '61 minutes' WHERE id = $1`,
      [first.body.checkoutId],
    );
    const second = await checkout(user, {
      planId: 'pro',
      provider: 'stripe',
    }).expect(201);
    expect(second.body.checkoutId).not.toBe(first.body.checkoutId);
    const rows = await checkoutsOf(user);
    expect(rows.find((row) => row.id === first.body.checkoutId)?.status).toBe(
      'expired',
    );
  });
});

describe('checkout and webhooks without provider credentials', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  beforeAll(async () => {
    stripe = await new FakeStripe().start();
    // Stripe's URL is set but no key: nothing may reach it.
    t = await bootTestApp({
      STRIPE_API_URL: stripe.baseUrl,
      STRIPE_SECRET_KEY: undefined,
      STRIPE_WEBHOOK_SECRET: undefined,
      PADDLE_API_KEY: undefined,
      PADDLE_WEBHOOK_SECRET: undefined,
    });
  });
  afterAll(async () => {
    await t.close();
    await stripe.close();
  });

  it.each(['stripe', 'paddle'])(
    'answers 503 provider_not_configured for %s and calls nothing',
    async (provider) => {
      const user = await registerUser(t.http);
      const res = await t.http
        .post('/v1/billing/checkout')
        .set('Cookie', user.cookie)
        .send({ planId: 'pro', provider })
        .expect(503);
      expect(res.body.code).toBe('provider_not_configured');
      expect(stripe.requests).toEqual([]);
      const webhook = await t.http
        .post(`/v1/webhooks/${provider}`)
        .set('Content-Type', 'application/json')
        .send('{}')
        .expect(503);
      expect(webhook.body.code).toBe('provider_not_configured');
    },
  );
});
