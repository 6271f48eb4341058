import { FakePaddle, FakeStripe } from './fake-payment-providers';
import {
  PADDLE_WEBHOOK_SECRET,
  paddleSignature,
  STRIPE_WEBHOOK_SECRET,
  stripeSignature,
} from './billing-events';
import { sql } from './sql';
import { TestApp } from './test-app';

/** The environment that points both payment providers at the loopback fakes. */
export function billingEnv(
  stripe: FakeStripe,
  paddle: FakePaddle,
): Record<string, string> {
  return {
    STRIPE_SECRET_KEY: 'sk_test_fake_key',
    STRIPE_WEBHOOK_SECRET,
    STRIPE_API_URL: stripe.baseUrl,
    PADDLE_API_KEY: 'pdl_sdbx_apikey_fake',
    PADDLE_WEBHOOK_SECRET,
    PADDLE_API_URL: paddle.baseUrl,
  };
}

/** Posts a webhook as the provider does: raw JSON body and its signature header (signed now unless given). */
export function deliver(
  t: TestApp,
  provider: 'stripe' | 'paddle',
  payload: string,
  signature?: string,
) {
  const header =
    provider === 'stripe' ? 'Stripe-Signature' : 'Paddle-Signature';
  const value =
    signature ??
    (provider === 'stripe'
      ? stripeSignature(payload)
      : paddleSignature(payload));
  return t.http
    .post(`/v1/webhooks/${provider}`)
    .set('Content-Type', 'application/json')
    .set(header, value)
    .send(payload);
}

export async function dailyCreditsOf(
  planCode: string,
  url?: string,
): Promise<number> {
  const [plan] = await sql<{ dailyCredits: number }>(
    'SELECT "dailyCredits" FROM "Plan" WHERE code = $1',
    [planCode],
    url,
  );
  return plan.dailyCredits;
}

export async function planOf(userId: string, url?: string): Promise<string> {
  const [user] = await sql<{ planCode: string }>(
    'SELECT "planCode" FROM "User" WHERE id = $1',
    [userId],
    url,
  );
  return user.planCode;
}

export async function providerSessionOf(
  checkoutId: string,
  url?: string,
): Promise<string> {
  const [row] = await sql<{ providerSessionId: string }>(
    'SELECT "providerSessionId" FROM "Checkout" WHERE id = $1',
    [checkoutId],
    url,
  );
  return row.providerSessionId;
}

export const inDays = (days: number) => new Date(Date.now() + days * 86400_000);
export const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
