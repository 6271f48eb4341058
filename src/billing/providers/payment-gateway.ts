import { SubscriptionSnapshot } from '../subscription-state';

export const PAYMENT_PROVIDERS = ['stripe', 'paddle'] as const;
export type PaymentProviderName = (typeof PAYMENT_PROVIDERS)[number];

/** The most seats one organization's subscription may have (checkout and seat changes). */
export const MAX_SEATS = 1000;

/**
 * What a provider is asked to charge: always built from the plan row, never from the request. The provider
 * charges `plan.amount` per unit times `quantity` (its own quantity field): 1 for a personal plan, the
 * seats of an organization's purchase.
 */
export interface CheckoutOrder {
  checkoutId: string;
  userId: string;
  email: string;
  /** The organization the seats are bought for; null for the buyer's own plan. */
  organizationId: string | null;
  quantity: number;
  plan: {
    code: string;
    name: string;
    amount: number;
    currency: string;
    interval: 'month' | 'year';
  };
  successUrl: string;
  cancelUrl: string;
  /**
   * When the provider must stop taking payment for it: the end of our pending window, so a session we consider
   * given up can no longer be paid (Stripe's `expires_at`; Paddle transactions have no expiry and are canceled
   * when replaced instead).
   */
  expiresAt: Date;
}

export interface ProviderCheckout {
  /** Stripe Checkout Session id (cs_...) or Paddle transaction id (txn_...). */
  sessionId: string;
  url: string;
}

/** A webhook whose signature was verified: the provider's event id, type, time and parsed body. */
export interface VerifiedWebhook {
  eventId: string;
  type: string;
  occurredAt: Date;
  payload: Record<string, unknown>;
}

/** What an event means for us, in provider-neutral terms. */
export type BillingAction =
  | {
      kind: 'checkout_completed';
      providerSessionId: string;
      subscription: SubscriptionSnapshot | null;
    }
  | { kind: 'checkout_expired'; providerSessionId: string }
  | { kind: 'subscription_changed'; subscription: SubscriptionSnapshot }
  | { kind: 'ignored' };

/**
 * One payment provider: opening a checkout, verifying its webhooks and reading their events. The rest of
 * billing only sees this interface.
 */
export interface PaymentGateway {
  readonly provider: PaymentProviderName;
  /** Checkout needs the API key and the webhook secret: a payment nobody can confirm must not be taken. */
  canCheckout(): boolean;
  canVerifyWebhooks(): boolean;
  createCheckout(order: CheckoutOrder): Promise<ProviderCheckout>;
  /**
   * Makes a checkout session we gave up unpayable at the provider (Stripe: expires the Checkout Session; Paddle:
   * cancels the transaction). True when it can no longer be paid (now or already: expired, canceled, unknown);
   * false when the provider keeps it payable or paid (completed, or a Paddle transaction still a draft, which
   * Paddle does not cancel). Rejects with AppError payment_provider_unavailable (503) when the provider cannot
   * be reached, provider_not_configured (503) without an API key.
   */
  expireCheckout(providerSessionId: string): Promise<boolean>;
  /** Rejects with AppError webhook_signature_invalid (400) or webhook_payload_invalid (400). */
  verifyWebhook(
    rawBody: Buffer,
    signatureHeader: string | undefined,
    now: Date,
  ): Promise<VerifiedWebhook>;
  /** May ask the provider for details (503 webhook_not_processed when it cannot be reached). */
  interpret(webhook: VerifiedWebhook): Promise<BillingAction>;
  /**
   * Ends the subscription at the provider now: nothing more is billed. One the provider does not know or has
   * already canceled counts as done. Rejects with AppError payment_provider_unavailable (503) when the
   * provider cannot be reached or refuses, provider_not_configured (503) without an API key.
   */
  cancelSubscription(providerSubscriptionId: string): Promise<void>;
  /**
   * Sets the quantity (seats) of the subscription's item at the provider, the prorated difference charged now;
   * the provider applies the new quantity only once that charge is paid (a decrease at once). Our records change
   * only when the provider's webhook confirms the quantity. Rejects with AppError payment_provider_error (502) when the
   * provider refuses or cannot be reached, provider_not_configured (503) without an API key.
   */
  changeQuantity(
    providerSubscriptionId: string,
    quantity: number,
  ): Promise<void>;
}

/** The stable key a provider may use to de-duplicate the creation of one checkout's session. */
export function checkoutIdempotencyKey(checkoutId: string): string {
  return `checkout-${checkoutId}`;
}
