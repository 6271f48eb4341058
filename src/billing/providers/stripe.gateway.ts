import { Inject, Injectable } from '@nestjs/common';
import Stripe from 'stripe';
import { z } from 'zod';
import { AppError } from '../../common/errors/app-error';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import {
  SubscriptionSnapshot,
  SubscriptionStatus,
} from '../subscription-state';
import {
  BillingAction,
  CheckoutOrder,
  checkoutIdempotencyKey,
  PaymentGateway,
  ProviderCheckout,
  VerifiedWebhook,
} from './payment-gateway';
import { parsePayload, providerId, unixSeconds } from './webhook-payload';
import {
  isStale,
  SIGNATURE_PROBLEM_DETAIL,
  SignatureProblem,
} from './webhook-signature';

const DEFAULT_API_URL = 'https://api.stripe.com';
/** Stripe's own default and what the contract asks for. */
export const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300;
const SIGNATURE_HEADER = 'Stripe-Signature';
const REQUEST_TIMEOUT_MS = 10_000;

const eventSchema = z.object({
  id: providerId,
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

const expandable = z
  .union([providerId, z.object({ id: providerId })])
  .transform((value) => (typeof value === 'string' ? value : value.id));
const metadata = z.record(z.string(), z.string()).nullish();

const checkoutSessionSchema = z.object({
  id: providerId,
  mode: z.string(),
  subscription: expandable.nullish(),
});

const subscriptionSchema = z.object({
  id: providerId,
  status: z.string(),
  customer: expandable.nullish(),
  cancel_at_period_end: z.boolean(),
  cancel_at: z.number().int().nullish(),
  canceled_at: z.number().int().nullish(),
  current_period_end: z.number().int().nullish(),
  items: z
    .object({
      data: z.array(
        z.object({
          current_period_end: z.number().int().nullish(),
          /**
           * The seats of an organization's subscription (one item), as paid: a seat change whose invoice is not
           * paid yet waits in the subscription's `pending_update`, which is never read (docs/adr/0062).
           */
          quantity: z.number().int().nonnegative().nullish(),
        }),
      ),
    })
    .nullish(),
  metadata,
});

const STATUS: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'active',
  past_due: 'past_due',
  unpaid: 'past_due',
  canceled: 'canceled',
  incomplete_expired: 'canceled',
  incomplete: 'incomplete',
  paused: 'paused',
};

const SUBSCRIPTION_EVENTS = new Set([
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'customer.subscription.paused',
  'customer.subscription.resumed',
  // A seat change paid late (its items are the subscription's now), or given up unpaid (they stay as they were).
  'customer.subscription.pending_update_applied',
  'customer.subscription.pending_update_expired',
]);

/**
 * Stripe through its official SDK (API version pinned by the SDK): Checkout Sessions in subscription mode,
 * signed webhooks (Stripe-Signature, 300 s tolerance) and the subscription events. STRIPE_API_URL points it
 * elsewhere (the tests' fake).
 */
@Injectable()
export class StripeGateway implements PaymentGateway {
  readonly provider = 'stripe' as const;
  private readonly client: Stripe | null;
  private readonly webhookSecret: string | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly log: AppLogger,
  ) {
    const { apiKey, apiUrl, webhookSecret } = config.billing.stripe;
    this.webhookSecret = webhookSecret;
    this.client = apiKey
      ? new Stripe(apiKey, {
          ...hostOptions(apiUrl ?? DEFAULT_API_URL),
          maxNetworkRetries: 1,
          timeout: REQUEST_TIMEOUT_MS,
          telemetry: false,
        })
      : null;
  }

  canCheckout(): boolean {
    return this.client !== null && this.webhookSecret !== undefined;
  }

  canVerifyWebhooks(): boolean {
    return this.webhookSecret !== undefined;
  }

  async createCheckout(order: CheckoutOrder): Promise<ProviderCheckout> {
    // The organization travels as the user id does; our Checkout row stays what links a payment to it.
    const reference = {
      checkoutId: order.checkoutId,
      userId: order.userId,
      planCode: order.plan.code,
      ...(order.organizationId ? { organizationId: order.organizationId } : {}),
    };
    try {
      const session = await this.requireClient().checkout.sessions.create(
        {
          mode: 'subscription',
          line_items: [
            {
              // The unit price is the plan's; Stripe charges it times the seats.
              quantity: order.quantity,
              price_data: {
                currency: order.plan.currency.toLowerCase(),
                unit_amount: order.plan.amount,
                recurring: { interval: order.plan.interval },
                product_data: { name: order.plan.name },
              },
            },
          ],
          // Our pending window, not Stripe's default 24 hours: once we give the checkout up it cannot be paid.
          expires_at: Math.floor(order.expiresAt.getTime() / 1000),
          client_reference_id: order.checkoutId,
          customer_email: order.email,
          metadata: reference,
          subscription_data: { metadata: reference },
          success_url: order.successUrl,
          cancel_url: order.cancelUrl,
        },
        { idempotencyKey: checkoutIdempotencyKey(order.checkoutId) },
      );
      if (!session.url)
        throw new Error('Stripe returned a Checkout Session without a url');
      return { sessionId: session.id, url: session.url };
    } catch (error) {
      this.log.error(
        { err: error, checkoutId: order.checkoutId },
        'stripe checkout session could not be created',
      );
      throw new AppError(
        'payment_provider_error',
        'Stripe could not open a checkout; nothing was charged. Try again in a moment.',
      );
    }
  }

  verifyWebhook(
    rawBody: Buffer,
    signatureHeader: string | undefined,
    now: Date,
  ): Promise<VerifiedWebhook> {
    // Checked here and now, without asking Stripe; a refusal still rejects, as PaymentGateway says.
    return new Promise((resolve) =>
      resolve(this.verifiedWebhook(rawBody, signatureHeader, now)),
    );
  }

  private verifiedWebhook(
    rawBody: Buffer,
    signatureHeader: string | undefined,
    now: Date,
  ): VerifiedWebhook {
    const secret = this.webhookSecret;
    if (!secret)
      throw new AppError(
        'provider_not_configured',
        'Stripe webhooks are not configured on this server.',
      );
    const problem = signatureProblem(rawBody, signatureHeader, secret, now);
    if (problem)
      throw new AppError(
        'webhook_signature_invalid',
        SIGNATURE_PROBLEM_DETAIL[problem](
          SIGNATURE_HEADER,
          STRIPE_SIGNATURE_TOLERANCE_SECONDS,
        ),
      );
    const event = parsePayload(eventSchema, parseJson(rawBody), 'Stripe event');
    return {
      eventId: event.id,
      type: event.type,
      occurredAt: unixSeconds(event.created),
      payload: event.data.object,
    };
  }

  async interpret(webhook: VerifiedWebhook): Promise<BillingAction> {
    switch (webhook.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return this.completedCheckout(webhook.payload);
      case 'checkout.session.expired':
        return {
          kind: 'checkout_expired',
          providerSessionId: parsePayload(
            checkoutSessionSchema,
            webhook.payload,
            'Checkout Session',
          ).id,
        };
      default:
        if (!SUBSCRIPTION_EVENTS.has(webhook.type)) return { kind: 'ignored' };
        return {
          kind: 'subscription_changed',
          subscription: toSnapshot(
            parsePayload(subscriptionSchema, webhook.payload, 'subscription'),
          ),
        };
    }
  }

  /**
   * POST /v1/checkout/sessions/:id/expire (the SDK's checkout.sessions.expire). Stripe expires only `open`
   * sessions and answers 400 for the others: the session is then read to tell an expired one (done) from a
   * completed one (paid: false). An unknown session (404 resource_missing) cannot be paid.
   */
  async expireCheckout(providerSessionId: string): Promise<boolean> {
    const client = this.requireClient();
    try {
      await client.checkout.sessions.expire(providerSessionId);
      return true;
    } catch (error) {
      if (isMissing(error)) return true;
      if (!(error instanceof Stripe.errors.StripeInvalidRequestError))
        throw this.expiryFailed(error, providerSessionId);
    }
    try {
      const session =
        await client.checkout.sessions.retrieve(providerSessionId);
      return session.status === 'expired';
    } catch (error) {
      if (isMissing(error)) return true;
      throw this.expiryFailed(error, providerSessionId);
    }
  }

  private expiryFailed(error: unknown, providerSessionId: string): AppError {
    this.log.error(
      { err: error, session: providerSessionId },
      'stripe checkout session could not be expired',
    );
    return new AppError(
      'payment_provider_unavailable',
      'Stripe could not expire the checkout session right now. Try again in a moment.',
    );
  }

  /**
   * DELETE /v1/subscriptions/:id (the SDK's subscriptions.cancel): canceled at once, no further invoice.
   * Stripe answers 404 resource_missing for a subscription it does not know and for one already canceled
   * (a canceled subscription counts as deleted there): both mean nothing is billed any more.
   */
  async cancelSubscription(providerSubscriptionId: string): Promise<void> {
    const client = this.requireClient();
    try {
      await client.subscriptions.cancel(providerSubscriptionId);
    } catch (error) {
      if (isMissing(error)) return;
      this.log.error(
        { err: error, subscription: providerSubscriptionId },
        'stripe subscription could not be canceled',
      );
      throw new AppError(
        'payment_provider_unavailable',
        'Stripe could not cancel the subscription right now; nothing was changed. Try again in a moment.',
      );
    }
  }

  /**
   * POST /v1/subscriptions/:id (the SDK's subscriptions.update) with the one item's id and its new quantity,
   * `proration_behavior: always_invoice` (the prorated difference is invoiced and charged now) and
   * `payment_behavior: pending_if_incomplete`: when that charge fails, Stripe keeps the old quantity and holds
   * the new one in the subscription's `pending_update` until the invoice is paid (or the update expires), so
   * seats are never granted before they are paid. A decrease (a credit) applies at once. The item id is read
   * from Stripe first (we store none).
   */
  async changeQuantity(
    providerSubscriptionId: string,
    quantity: number,
  ): Promise<void> {
    const client = this.requireClient();
    try {
      const subscription = await client.subscriptions.retrieve(
        providerSubscriptionId,
      );
      const item = subscription.items.data[0];
      if (!item)
        throw new Error('the Stripe subscription has no item to change');
      await client.subscriptions.update(providerSubscriptionId, {
        items: [{ id: item.id, quantity }],
        proration_behavior: 'always_invoice',
        payment_behavior: 'pending_if_incomplete',
      });
    } catch (error) {
      this.log.error(
        { err: error, subscription: providerSubscriptionId, quantity },
        'stripe subscription quantity could not be changed',
      );
      throw new AppError(
        'payment_provider_error',
        'Stripe could not change the seats; nothing was changed. Try again in a moment.',
      );
    }
  }

  /** A session's event does not carry the subscription's period: it is read from Stripe, the source of truth. */
  private async completedCheckout(
    payload: Record<string, unknown>,
  ): Promise<BillingAction> {
    const session = parsePayload(
      checkoutSessionSchema,
      payload,
      'Checkout Session',
    );
    if (session.mode !== 'subscription' || !session.subscription)
      return {
        kind: 'checkout_completed',
        providerSessionId: session.id,
        subscription: null,
      };
    let subscription: unknown;
    try {
      subscription = await this.requireClient().subscriptions.retrieve(
        session.subscription,
      );
    } catch (error) {
      this.log.error(
        { err: error, subscription: session.subscription },
        'stripe subscription could not be read',
      );
      throw new AppError(
        'webhook_not_processed',
        'The subscription could not be read from Stripe; the event will be applied when it is delivered again.',
      );
    }
    const snapshot = toSnapshot(
      parsePayload(subscriptionSchema, subscription, 'subscription'),
    );
    return {
      kind: 'checkout_completed',
      providerSessionId: session.id,
      subscription: { ...snapshot, checkoutSessionId: session.id },
    };
  }

  private requireClient(): Stripe {
    if (!this.client)
      throw new AppError(
        'provider_not_configured',
        'Stripe is not configured on this server.',
      );
    return this.client;
  }
}

function toSnapshot(
  subscription: z.infer<typeof subscriptionSchema>,
): SubscriptionSnapshot {
  const itemPeriodEnds = (subscription.items?.data ?? [])
    .map((item) => item.current_period_end)
    .filter((end): end is number => typeof end === 'number');
  const periodEnd =
    subscription.current_period_end ??
    (itemPeriodEnds.length > 0 ? Math.max(...itemPeriodEnds) : null);
  return {
    providerSubscriptionId: subscription.id,
    status: STATUS[subscription.status] ?? 'incomplete',
    currentPeriodEnd: periodEnd === null ? null : unixSeconds(periodEnd),
    cancelAtPeriodEnd:
      subscription.cancel_at_period_end ||
      (subscription.cancel_at ?? null) !== null,
    canceledAt: subscription.canceled_at
      ? unixSeconds(subscription.canceled_at)
      : null,
    providerCustomerId: subscription.customer ?? null,
    checkoutHint: subscription.metadata?.checkoutId ?? null,
    quantity: subscription.items?.data[0]?.quantity ?? undefined,
  };
}

/** Stripe's answer for an object it does not know (a canceled subscription counts as deleted there). */
function isMissing(error: unknown): boolean {
  return (
    error instanceof Stripe.errors.StripeError &&
    error.statusCode === 404 &&
    error.code === 'resource_missing'
  );
}

/** Missing and malformed headers are told apart first; the SDK then checks the signature itself. */
function signatureProblem(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
  now: Date,
): SignatureProblem | null {
  if (!header?.trim()) return 'missing';
  const timestamp = /(?:^|,)\s*t=(\d{1,12})\s*(?:,|$)/.exec(header)?.[1];
  if (!timestamp || !/(?:^|,)\s*v1=[0-9a-f]+\s*(?:,|$)/i.test(header))
    return 'malformed';
  // Both directions: the SDK only refuses timestamps too far in the past, and one from the future would
  // let a captured signature be replayed until that time comes.
  if (isStale(Number(timestamp), now, STRIPE_SIGNATURE_TOLERANCE_SECONDS))
    return 'stale';
  try {
    Stripe.webhooks.constructEvent(
      rawBody,
      header,
      secret,
      STRIPE_SIGNATURE_TOLERANCE_SECONDS,
      undefined,
      now.getTime(),
    );
    return null;
  } catch {
    return 'mismatch';
  }
}

function parseJson(rawBody: Buffer): unknown {
  try {
    return JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new AppError(
      'webhook_payload_invalid',
      'The webhook body is not JSON.',
    );
  }
}

function hostOptions(apiUrl: string): {
  host: string;
  port: number;
  protocol: 'http' | 'https';
} {
  const url = new URL(apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return {
    host: url.hostname,
    port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443,
    protocol,
  };
}
