import { Inject, Injectable } from '@nestjs/common';
import {
  ApiError,
  CurrencyCode,
  Environment,
  LogLevel,
  Paddle,
  Transaction,
} from '@paddle/paddle-node-sdk';
import { z } from 'zod';
import { AppError } from '../../common/errors/app-error';
import { AppLogger } from '../../common/logging/app-logger';
import { withTimeout } from '../../common/with-timeout';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import {
  SubscriptionSnapshot,
  SubscriptionStatus,
} from '../subscription-state';
import {
  verifyPaddleSignature,
  PADDLE_SIGNATURE_TOLERANCE_SECONDS,
} from './paddle-signature';
import {
  BillingAction,
  CheckoutOrder,
  checkoutIdempotencyKey,
  MAX_SEATS,
  PaymentGateway,
  ProviderCheckout,
  VerifiedWebhook,
} from './payment-gateway';
import { parsePayload, providerId } from './webhook-payload';
import { SIGNATURE_PROBLEM_DETAIL } from './webhook-signature';

const SIGNATURE_HEADER = 'Paddle-Signature';
const REQUEST_TIMEOUT_MS = 10_000;

const timestamp = z.iso
  .datetime({ offset: true })
  .transform((value) => new Date(value));
const customData = z.record(z.string(), z.unknown()).nullish();

const eventSchema = z.object({
  event_id: providerId,
  event_type: z.string().min(1).max(255),
  occurred_at: timestamp,
  data: z.record(z.string(), z.unknown()),
});

const transactionSchema = z.object({
  id: providerId,
  subscription_id: providerId.nullish(),
  customer_id: providerId.nullish(),
  custom_data: customData,
  billing_period: z.object({ ends_at: timestamp }).nullish(),
  /** What was paid for: Paddle's checkout lets the buyer change the quantity within the price's range. */
  items: z
    .array(z.object({ quantity: z.number().int().nonnegative().nullish() }))
    .nullish(),
});

const subscriptionSchema = z.object({
  id: providerId,
  status: z.string(),
  customer_id: providerId.nullish(),
  current_billing_period: z.object({ ends_at: timestamp }).nullish(),
  scheduled_change: z.object({ action: z.string() }).nullish(),
  canceled_at: timestamp.nullish(),
  custom_data: customData,
  /** The transaction that created it (subscription.created): links it to our checkout. */
  transaction_id: providerId.nullish(),
  /** The seats of an organization's subscription (one item). */
  items: z
    .array(z.object({ quantity: z.number().int().nonnegative().nullish() }))
    .nullish(),
});

const STATUS: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'active',
  past_due: 'past_due',
  canceled: 'canceled',
  paused: 'paused',
};
/** Paddle's error code for a transaction status it does not change (a draft, a completed transaction). */
const STATUS_NOT_CHANGED = 'transaction_invalid_status_change';
/** Paddle's error codes of a cancellation that has nothing left to cancel. */
const ALREADY_ENDED = new Set([
  'not_found',
  'subscription_is_canceled_action_invalid',
]);

/**
 * Paddle Billing through its Node SDK: a transaction with a non-catalog price built from the plan (its checkout
 * URL is what the client opens), Paddle-Signature webhooks and the subscription and transaction events.
 */
@Injectable()
export class PaddleGateway implements PaymentGateway {
  readonly provider = 'paddle' as const;
  private readonly apiKey: string | undefined;
  /** Paddle's production API, or PADDLE_API_URL (the SDK takes a base URL where it takes an environment). */
  private readonly environment: Environment;
  private readonly webhookSecret: string | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly log: AppLogger,
  ) {
    this.apiKey = config.billing.paddle.apiKey;
    const apiUrl = config.billing.paddle.apiUrl?.replace(/\/+$/, '');
    this.environment = apiUrl
      ? (apiUrl as Environment)
      : Environment.production;
    this.webhookSecret = config.billing.paddle.webhookSecret;
  }

  canCheckout(): boolean {
    return this.apiKey !== undefined && this.webhookSecret !== undefined;
  }

  canVerifyWebhooks(): boolean {
    return this.webhookSecret !== undefined;
  }

  /**
   * A transaction through the SDK (`transactions.create`). Paddle documents no idempotency keys; the header
   * is sent for a proxy or a future API, and what really keeps one transaction per checkout is the
   * pending-checkout row lock held around this call. The SDK has no timeout of its own: after
   * REQUEST_TIMEOUT_MS the checkout fails (nothing is kept) and the SDK's request is left to end by itself.
   */
  async createCheckout(order: CheckoutOrder): Promise<ProviderCheckout> {
    const { plan } = order;
    const client = new Paddle(this.apiKey ?? '', {
      environment: this.environment,
      logLevel: LogLevel.none,
      customHeaders: {
        'Idempotency-Key': checkoutIdempotencyKey(order.checkoutId),
      },
    });
    // Seats: Paddle charges the unit price times the item's quantity, within the price's quantity range
    // (1 to 100 unless set), which later seat changes of the subscription must stay in.
    const perSeat = order.organizationId
      ? {
          description: `${plan.name} plan, per seat, billed every ${plan.interval}`,
          quantity: { minimum: 1, maximum: MAX_SEATS },
        }
      : { description: `${plan.name} plan, billed every ${plan.interval}` };
    let transaction: Transaction;
    try {
      transaction = await withTimeout(
        client.transactions.create({
          items: [
            {
              quantity: order.quantity,
              price: {
                name: plan.name,
                ...perSeat,
                unitPrice: {
                  amount: String(plan.amount),
                  currencyCode: plan.currency as CurrencyCode,
                },
                billingCycle: { interval: plan.interval, frequency: 1 },
                product: { name: plan.name, taxCategory: 'standard' },
              },
            },
          ],
          customData: {
            checkoutId: order.checkoutId,
            userId: order.userId,
            planCode: plan.code,
            ...(order.organizationId
              ? { organizationId: order.organizationId }
              : {}),
          },
          collectionMode: 'automatic',
        }),
        REQUEST_TIMEOUT_MS,
        // The SDK's fetch takes no signal: the request is left to end by itself.
        `no answer from Paddle within ${REQUEST_TIMEOUT_MS} ms`,
      );
    } catch (error) {
      const detail =
        error instanceof ApiError
          ? { type: error.type, code: error.code, detail: error.detail }
          : undefined;
      this.log.error(
        {
          err: detail ? undefined : error,
          error: detail,
          checkoutId: order.checkoutId,
        },
        detail
          ? 'paddle transaction could not be created'
          : 'paddle could not be reached',
      );
      throw providerFailed();
    }
    const url = transaction.checkout?.url;
    if (!url) {
      this.log.error(
        { transactionId: transaction.id, checkoutId: order.checkoutId },
        'paddle transaction has no checkout url',
      );
      throw providerFailed();
    }
    return { sessionId: transaction.id, url };
  }

  async verifyWebhook(
    rawBody: Buffer,
    signatureHeader: string | undefined,
    now: Date,
  ): Promise<VerifiedWebhook> {
    const secret = this.webhookSecret;
    if (!secret)
      throw new AppError(
        'provider_not_configured',
        'Paddle webhooks are not configured on this server.',
      );
    const problem = await verifyPaddleSignature(
      rawBody,
      signatureHeader,
      secret,
      now,
    );
    if (problem)
      throw new AppError(
        'webhook_signature_invalid',
        SIGNATURE_PROBLEM_DETAIL[problem](
          SIGNATURE_HEADER,
          PADDLE_SIGNATURE_TOLERANCE_SECONDS,
        ),
      );
    let json: unknown;
    try {
      json = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new AppError(
        'webhook_payload_invalid',
        'The webhook body is not JSON.',
      );
    }
    const event = parsePayload(eventSchema, json, 'Paddle notification');
    return {
      eventId: event.event_id,
      type: event.event_type,
      occurredAt: event.occurred_at,
      payload: event.data,
    };
  }

  interpret(webhook: VerifiedWebhook): Promise<BillingAction> {
    // Paddle's events carry all that is needed: nothing to ask. A bad payload still rejects.
    return new Promise((resolve) => resolve(paddleAction(webhook)));
  }

  /**
   * PATCH /transactions/{id} with `status: canceled` alone (the SDK's transactions.update): a canceled
   * transaction cannot be paid. Paddle cancels `ready` (and `billed`) transactions only; for the others it
   * answers 400 transaction_invalid_status_change and the transaction is read: canceled is done, a `draft`
   * (the buyer has not entered their details yet) or a paid one stays payable or paid (false). Paddle
   * transactions have no expiry of their own. An unknown transaction (404 not_found) cannot be paid.
   */
  async expireCheckout(providerSessionId: string): Promise<boolean> {
    const client = this.client();
    try {
      await withTimeout(
        client.transactions.update(providerSessionId, { status: 'canceled' }),
        REQUEST_TIMEOUT_MS,
        `no answer from Paddle within ${REQUEST_TIMEOUT_MS} ms`,
      );
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') return true;
      if (!(error instanceof ApiError && error.code === STATUS_NOT_CHANGED))
        throw this.cancellationFailed(error, providerSessionId);
    }
    try {
      const transaction = await withTimeout(
        client.transactions.get(providerSessionId),
        REQUEST_TIMEOUT_MS,
        `no answer from Paddle within ${REQUEST_TIMEOUT_MS} ms`,
      );
      return transaction.status === 'canceled';
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') return true;
      throw this.cancellationFailed(error, providerSessionId);
    }
  }

  private cancellationFailed(error: unknown, transactionId: string): AppError {
    const detail =
      error instanceof ApiError
        ? { type: error.type, code: error.code, detail: error.detail }
        : undefined;
    this.log.error(
      { err: detail ? undefined : error, error: detail, transactionId },
      'paddle transaction could not be canceled',
    );
    return new AppError(
      'payment_provider_unavailable',
      'Paddle could not cancel the checkout right now. Try again in a moment.',
    );
  }

  /**
   * POST /subscriptions/{id}/cancel with `effective_from: immediately` (the SDK's subscriptions.cancel): the
   * default would let the current period run and bill nothing more, but an erased account must not keep a
   * live subscription. Paddle answers 404 not_found for an id it does not know and 400
   * subscription_is_canceled_action_invalid for one already canceled: both are done.
   */
  async cancelSubscription(providerSubscriptionId: string): Promise<void> {
    const client = this.client();
    try {
      // The SDK's fetch takes no signal: after the timeout its request is left to end by itself.
      await withTimeout(
        client.subscriptions.cancel(providerSubscriptionId, {
          effectiveFrom: 'immediately',
        }),
        REQUEST_TIMEOUT_MS,
        `no answer from Paddle within ${REQUEST_TIMEOUT_MS} ms`,
      );
    } catch (error) {
      if (error instanceof ApiError && ALREADY_ENDED.has(error.code)) return;
      const detail =
        error instanceof ApiError
          ? { type: error.type, code: error.code, detail: error.detail }
          : undefined;
      this.log.error(
        {
          err: detail ? undefined : error,
          error: detail,
          subscription: providerSubscriptionId,
        },
        'paddle subscription could not be canceled',
      );
      throw new AppError(
        'payment_provider_unavailable',
        'Paddle could not cancel the subscription right now; nothing was changed. Try again in a moment.',
      );
    }
  }

  /**
   * PATCH /subscriptions/{id} (the SDK's subscriptions.update) with the item's price and its new quantity,
   * `proration_billing_mode: prorated_immediately`: Paddle charges the prorated difference now, and with
   * `on_payment_failure: prevent_change` (Paddle's default, sent to say so) a charge that fails leaves the
   * subscription as it was, so seats are never granted before they are paid. Paddle replaces the whole item
   * list, so the one item's price id is read from Paddle first (we store none).
   */
  async changeQuantity(
    providerSubscriptionId: string,
    quantity: number,
  ): Promise<void> {
    const client = this.client();
    try {
      const subscription = await withTimeout(
        client.subscriptions.get(providerSubscriptionId),
        REQUEST_TIMEOUT_MS,
        `no answer from Paddle within ${REQUEST_TIMEOUT_MS} ms`,
      );
      const item = subscription.items[0];
      if (!item)
        throw new Error('the Paddle subscription has no item to change');
      await withTimeout(
        client.subscriptions.update(providerSubscriptionId, {
          items: [{ priceId: item.price.id, quantity }],
          prorationBillingMode: 'prorated_immediately',
          onPaymentFailure: 'prevent_change',
        }),
        REQUEST_TIMEOUT_MS,
        `no answer from Paddle within ${REQUEST_TIMEOUT_MS} ms`,
      );
    } catch (error) {
      const detail =
        error instanceof ApiError
          ? { type: error.type, code: error.code, detail: error.detail }
          : undefined;
      this.log.error(
        {
          err: detail ? undefined : error,
          error: detail,
          subscription: providerSubscriptionId,
          quantity,
        },
        'paddle subscription quantity could not be changed',
      );
      throw new AppError(
        'payment_provider_error',
        'Paddle could not change the seats; nothing was changed. Try again in a moment.',
      );
    }
  }

  private client(): Paddle {
    if (!this.apiKey)
      throw new AppError(
        'provider_not_configured',
        'Paddle is not configured on this server.',
      );
    return new Paddle(this.apiKey, {
      environment: this.environment,
      logLevel: LogLevel.none,
    });
  }
}

function paddleAction(webhook: VerifiedWebhook): BillingAction {
  if (webhook.type === 'transaction.completed')
    return transactionCompleted(webhook.payload);
  if (!webhook.type.startsWith('subscription.')) return { kind: 'ignored' };
  return {
    kind: 'subscription_changed',
    subscription: subscriptionSnapshot(
      parsePayload(subscriptionSchema, webhook.payload, 'subscription'),
    ),
  };
}

/** The first transaction completes a checkout; every paid transaction of a subscription says its period is paid. */
function transactionCompleted(payload: Record<string, unknown>): BillingAction {
  const transaction = parsePayload(transactionSchema, payload, 'transaction');
  const subscription: SubscriptionSnapshot | null = transaction.subscription_id
    ? {
        providerSubscriptionId: transaction.subscription_id,
        status: 'active',
        currentPeriodEnd: transaction.billing_period?.ends_at ?? null,
        providerCustomerId: transaction.customer_id ?? null,
        checkoutSessionId: transaction.id,
        checkoutHint: stringField(transaction.custom_data, 'checkoutId'),
        quantity: transaction.items?.[0]?.quantity ?? undefined,
      }
    : null;
  return {
    kind: 'checkout_completed',
    providerSessionId: transaction.id,
    subscription,
  };
}

function subscriptionSnapshot(
  subscription: z.infer<typeof subscriptionSchema>,
): SubscriptionSnapshot {
  return {
    providerSubscriptionId: subscription.id,
    status: STATUS[subscription.status] ?? 'paused',
    currentPeriodEnd: subscription.current_billing_period?.ends_at ?? null,
    cancelAtPeriodEnd: subscription.scheduled_change?.action === 'cancel',
    canceledAt: subscription.canceled_at ?? null,
    providerCustomerId: subscription.customer_id ?? null,
    checkoutSessionId: subscription.transaction_id ?? null,
    checkoutHint: stringField(subscription.custom_data, 'checkoutId'),
    quantity: subscription.items?.[0]?.quantity ?? undefined,
  };
}

function stringField(
  data: Record<string, unknown> | null | undefined,
  key: string,
): string | null {
  const value = data?.[key];
  return typeof value === 'string' ? value : null;
}

function providerFailed(): AppError {
  return new AppError(
    'payment_provider_error',
    'Paddle could not open a checkout; nothing was charged. Try again in a moment.',
  );
}
