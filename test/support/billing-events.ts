import { createHmac, randomUUID } from 'node:crypto';
import Stripe from 'stripe';

export const STRIPE_WEBHOOK_SECRET = 'whsec_test_secret_for_the_suite';
export const PADDLE_WEBHOOK_SECRET = 'pdl_ntfset_01test_secret_for_the_suite';

const nowSeconds = () => Math.floor(Date.now() / 1000);

// --- Stripe -----------------------------------------------------------------------------------------------

export function stripeEvent(
  type: string,
  object: Record<string, unknown>,
  options: { id?: string; created?: number } = {},
): string {
  return JSON.stringify({
    id: options.id ?? `evt_${randomUUID().replace(/-/g, '')}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    type,
    created: options.created ?? nowSeconds(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  });
}

/**
 * A Stripe Subscription object of the pinned API version (period on the items). `quantity`: the item's
 * quantity (an organization's seats); `organizationId` goes into the metadata as our checkout puts it.
 */
export function stripeSubscription(fields: {
  id: string;
  status: string;
  periodEnd: number;
  checkoutId?: string;
  userId?: string;
  cancelAtPeriodEnd?: boolean;
  canceledAt?: number | null;
  quantity?: number;
  organizationId?: string;
  planCode?: string;
}): Record<string, unknown> {
  return {
    id: fields.id,
    object: 'subscription',
    customer: 'cus_test_1',
    status: fields.status,
    cancel_at_period_end: fields.cancelAtPeriodEnd ?? false,
    cancel_at: null,
    canceled_at: fields.canceledAt ?? null,
    ended_at:
      fields.status === 'canceled' ? (fields.canceledAt ?? nowSeconds()) : null,
    items: {
      object: 'list',
      data: [
        {
          id: 'si_1',
          object: 'subscription_item',
          current_period_start: fields.periodEnd - 30 * 86400,
          current_period_end: fields.periodEnd,
          ...(fields.quantity !== undefined
            ? { quantity: fields.quantity }
            : {}),
        },
      ],
    },
    metadata: fields.checkoutId
      ? {
          checkoutId: fields.checkoutId,
          userId: fields.userId ?? '',
          planCode: fields.planCode ?? 'pro',
          ...(fields.organizationId
            ? { organizationId: fields.organizationId }
            : {}),
        }
      : {},
  };
}

export function stripeCheckoutSession(
  sessionId: string,
  subscriptionId: string,
  checkoutId: string,
): Record<string, unknown> {
  return {
    id: sessionId,
    object: 'checkout.session',
    mode: 'subscription',
    status: 'complete',
    payment_status: 'paid',
    client_reference_id: checkoutId,
    customer: 'cus_test_1',
    subscription: subscriptionId,
    metadata: { checkoutId },
  };
}

/** Stripe's own test helper signs the payload (t=..,v1=..). */
export function stripeSignature(
  payload: string,
  options: { secret?: string; timestamp?: number } = {},
): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? STRIPE_WEBHOOK_SECRET,
    timestamp: options.timestamp,
  });
}

// --- Paddle -----------------------------------------------------------------------------------------------

export function paddleEvent(
  type: string,
  data: Record<string, unknown>,
  options: { id?: string; occurredAt?: Date } = {},
): string {
  return JSON.stringify({
    event_id: options.id ?? `evt_${randomUUID().replace(/-/g, '')}`,
    event_type: type,
    occurred_at: (options.occurredAt ?? new Date())
      .toISOString()
      .replace('Z', '000Z'),
    notification_id: `ntf_${randomUUID().replace(/-/g, '')}`,
    data,
  });
}

export function paddleTransaction(fields: {
  id: string;
  subscriptionId: string | null;
  checkoutId?: string;
  periodEnd: Date;
  /** The quantity paid for (one item); absent: no items listed. */
  quantity?: number;
}): Record<string, unknown> {
  return {
    id: fields.id,
    status: 'completed',
    customer_id: 'ctm_test_1',
    subscription_id: fields.subscriptionId,
    origin: fields.checkoutId ? 'web' : 'subscription_recurring',
    custom_data: fields.checkoutId ? { checkoutId: fields.checkoutId } : null,
    billing_period: {
      starts_at: new Date(
        fields.periodEnd.getTime() - 30 * 86400_000,
      ).toISOString(),
      ends_at: fields.periodEnd.toISOString(),
    },
    items:
      fields.quantity === undefined
        ? []
        : [{ price_id: 'pri_team_seat', quantity: fields.quantity }],
    details: { totals: { subtotal: '2000', currency_code: 'USD' } },
  };
}

/**
 * A Paddle subscription entity. With `quantity`, it has one item (price `priceId`) of that quantity, complete
 * enough for Paddle's SDK to read it back (GET and PATCH /subscriptions/{id} of the fake answer it).
 */
export function paddleSubscription(fields: {
  id: string;
  status: string;
  periodEnd: Date | null;
  checkoutId?: string;
  transactionId?: string;
  scheduledCancel?: boolean;
  canceledAt?: Date | null;
  quantity?: number;
  priceId?: string;
  organizationId?: string;
}): Record<string, unknown> {
  return {
    id: fields.id,
    status: fields.status,
    customer_id: 'ctm_test_1',
    current_billing_period: fields.periodEnd
      ? {
          starts_at: new Date(
            fields.periodEnd.getTime() - 30 * 86400_000,
          ).toISOString(),
          ends_at: fields.periodEnd.toISOString(),
        }
      : null,
    scheduled_change: fields.scheduledCancel
      ? {
          action: 'cancel',
          effective_at: fields.periodEnd?.toISOString(),
          resume_at: null,
        }
      : null,
    canceled_at: fields.canceledAt ? fields.canceledAt.toISOString() : null,
    custom_data: fields.checkoutId
      ? {
          checkoutId: fields.checkoutId,
          ...(fields.organizationId
            ? { organizationId: fields.organizationId }
            : {}),
        }
      : null,
    transaction_id: fields.transactionId ?? null,
    items:
      fields.quantity === undefined
        ? []
        : [
            paddleSubscriptionItem(
              fields.priceId ?? 'pri_test_1',
              fields.quantity,
            ),
          ],
  };
}

/** One item of a Paddle subscription: a non-catalog recurring price and its quantity, as Paddle shows it. */
export function paddleSubscriptionItem(
  priceId: string,
  quantity: number,
): Record<string, unknown> {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    status: 'active',
    quantity,
    recurring: true,
    created_at: at,
    updated_at: at,
    previously_billed_at: at,
    next_billed_at: null,
    trial_dates: null,
    price: {
      id: priceId,
      product_id: 'pro_test_1',
      type: 'custom',
      description: 'Team plan, per seat, billed every month',
      name: 'Team',
      billing_cycle: { interval: 'month', frequency: 1 },
      trial_period: null,
      tax_mode: 'account_setting',
      unit_price: { amount: '6000', currency_code: 'USD' },
      unit_price_overrides: [],
      quantity: { minimum: 1, maximum: 1000 },
      status: 'active',
      custom_data: null,
      import_meta: null,
      created_at: at,
      updated_at: at,
    },
    product: {
      id: 'pro_test_1',
      name: 'Team',
      type: 'custom',
      description: null,
      tax_category: 'standard',
      image_url: null,
      custom_data: null,
      status: 'active',
      import_meta: null,
      created_at: at,
      updated_at: at,
    },
  };
}

/** Paddle's scheme, computed here: ts=<seconds>;h1=<HMAC-SHA256 hex of "<ts>:<body>">, one h1 per secret. */
export function paddleSignature(
  payload: string,
  options: { secrets?: string[]; timestamp?: number } = {},
): string {
  const ts = options.timestamp ?? nowSeconds();
  const signatures = (options.secrets ?? [PADDLE_WEBHOOK_SECRET]).map(
    (secret) =>
      `h1=${createHmac('sha256', secret).update(`${ts}:${payload}`).digest('hex')}`,
  );
  return [`ts=${ts}`, ...signatures].join(';');
}
