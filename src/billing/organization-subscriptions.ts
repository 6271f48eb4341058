import {
  LIVE_SUBSCRIPTION_STATUSES,
  LiveOrganizationSubscription,
} from './billing.repository';
import { PaymentProviderName } from './providers/payment-gateway';
import { SubscriptionStatus } from './subscription-state';

/**
 * The rules about an organization's subscriptions that checkout, seat changes and webhooks share: one renewing
 * subscription per organization. Pure functions over what the repository reads.
 * docs/adr/0062-organizations.md
 */

/** It binds the organization: it pays, or may pay again (paused). */
export function isLive(status: SubscriptionStatus): boolean {
  return (LIVE_SUBSCRIPTION_STATUSES as readonly string[]).includes(status);
}

/** It will bill again: live and not set to end with its period. Only one per organization. */
export function isRenewing(
  subscription: Pick<
    LiveOrganizationSubscription,
    'status' | 'cancelAtPeriodEnd'
  >,
): boolean {
  return isLive(subscription.status) && !subscription.cancelAtPeriodEnd;
}

/**
 * The subscription a seat change goes to: a renewing one first (seats bought on one that ends with its
 * period would go with it), the one the organization's plan comes from before another; else the plan's,
 * else the newest live one (its plan may be an admin's). Null when none is live. `live` is newest first.
 */
export function subscriptionForSeatChange(
  live: LiveOrganizationSubscription[],
  planSubscriptionId: string | null,
): LiveOrganizationSubscription | null {
  const isPlans = (subscription: LiveOrganizationSubscription) =>
    subscription.id === planSubscriptionId;
  return (
    live.find(
      (subscription) => isRenewing(subscription) && isPlans(subscription),
    ) ??
    live.find(isRenewing) ??
    live.find(isPlans) ??
    live[0] ??
    null
  );
}

/**
 * The subscription an organization already pays for, when the one an event is about would be a second: the
 * event makes it live (it is new to us, or was incomplete) while another subscription of the organization
 * renews. The first one is kept; the newcomer is the one to cancel. Null when there is no such conflict (a
 * subscription already live, or canceled, is never a newcomer).
 */
export function renewingRival(
  newcomer: {
    provider: PaymentProviderName;
    providerSubscriptionId: string;
    /** As the event tells it. */
    status: SubscriptionStatus;
    /** As we have it stored; null when we do not have it yet. */
    storedStatus: SubscriptionStatus | null;
  },
  live: LiveOrganizationSubscription[],
): LiveOrganizationSubscription | null {
  if (!isLive(newcomer.status)) return null;
  if (newcomer.storedStatus !== null && newcomer.storedStatus !== 'incomplete')
    return null;
  return (
    live.find(
      (other) =>
        isRenewing(other) &&
        !(
          other.provider === newcomer.provider &&
          other.providerSubscriptionId === newcomer.providerSubscriptionId
        ),
    ) ?? null
  );
}
