import { useCallback, useEffect, useRef, useState } from 'react';
import {
  api,
  describeFailure,
  unwrap,
  type Plan,
  type Schemas,
  type User,
} from '../api/client';
import { onQuotaChanged } from '../api/quota-events';
import { usePlans } from '../queries';
import { useOrgs } from '../org-context';
import type { ScreenProps } from '../session';
import { Notice } from './Notice';
import './plans.css';

type Subscription = Schemas['SubscriptionDto'];
type Provider = Schemas['CheckoutRequestDto']['provider'];

const PROVIDERS: { id: Provider; label: string }[] = [
  { id: 'stripe', label: 'Stripe' },
  { id: 'paddle', label: 'Paddle' },
];

/** "$20.00 / month", "Priced by contract": the amount is in the currency's minor units. */
export function priceOf(price: Plan['price']): string {
  if (price.interval === null) return 'Priced by contract';
  let format: Intl.NumberFormat;
  try {
    format = new Intl.NumberFormat(undefined, {
      style: 'currency',
      currency: price.currency,
    });
  } catch {
    return `${price.amount} ${price.currency} / ${price.interval}`;
  }
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return `${format.format(price.amount / 10 ** digits)} / ${price.interval}`;
}

const numbers = new Intl.NumberFormat();
const day = (iso: string) =>
  new Date(iso).toLocaleDateString(undefined, {
    year: 'numeric',
    month: 'long',
    day: 'numeric',
  });

function subscriptionLine(subscription: Subscription): string {
  if (subscription.status === 'none') return 'You have no paid subscription.';
  const via = subscription.provider
    ? `, paid through ${subscription.provider === 'stripe' ? 'Stripe' : 'Paddle'}`
    : '';
  const end = subscription.currentPeriodEnd
    ? day(subscription.currentPeriodEnd)
    : null;
  switch (subscription.status) {
    case 'active':
      return `${subscription.plan.name}: active${via}.${end ? (subscription.cancelAtPeriodEnd ? ` It ends on ${end}.` : ` It renews on ${end}.`) : ''}`;
    case 'past_due':
      return `${subscription.plan.name}: the last payment failed${via}. Update your payment details with the provider to keep the plan${end ? ` (period ended ${end})` : ''}.`;
    case 'canceled':
      return `${subscription.plan.name}: canceled${end ? ` (ended ${end})` : ''}.`;
    case 'incomplete':
      return `${subscription.plan.name}: the checkout is not complete yet${via}.`;
    case 'paused':
      return `${subscription.plan.name}: paused${via}.`;
  }
}

/** The plans with their prices, credits and models, the current one marked, and checkout through Stripe or Paddle. */
export function PlansScreen({ user }: ScreenProps) {
  const catalogue = usePlans();
  const plans = catalogue.data ?? null;
  const [subscription, setSubscription] = useState<Subscription | null>(null);
  const [subscriptionError, setError] = useState<unknown>(null);
  const error = catalogue.error ?? subscriptionError;
  const [checkout, setCheckout] = useState<{
    planId: string;
    provider: Provider;
  } | null>(null);
  const [checkoutError, setCheckoutError] = useState<{
    planId: string;
    error: unknown;
  } | null>(null);

  useEffect(() => {
    void api
      .GET('/v1/billing/subscription')
      .then((result) => setSubscription(unwrap(result)))
      .catch(setError);
  }, []);

  const startCheckout = async (planId: string, provider: Provider) => {
    setCheckout({ planId, provider });
    setCheckoutError(null);
    try {
      const session = unwrap(
        await api.POST('/v1/billing/checkout', {
          // A plan for oneself: no organizationId and no seats.
          body: { planId, provider },
        }),
      );
      // To the provider's payment page; it sends the person back to this service afterwards.
      window.location.assign(session.url);
    } catch (failure) {
      setCheckoutError({ planId, error: failure });
      setCheckout(null);
    }
  };

  return (
    <section className="plans" aria-labelledby="plans-title">
      <h1 id="plans-title">Plans</h1>
      <p className="current-plan">
        Your plan: <strong>{user.plan.name}</strong>
      </p>
      {subscription ? (
        <p className="subscription">{subscriptionLine(subscription)}</p>
      ) : null}
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
      {plans === null && !error ? <p role="status">Loading plans…</p> : null}
      {plans ? (
        <ul className="plan-list" aria-label="Plans">
          {plans.map((plan) => {
            const current = plan.code === user.plan.code;
            return (
              <li
                key={plan.id}
                className={`plan${current ? ' plan-current' : ''}`}
                aria-current={current ? 'true' : undefined}
                aria-labelledby={`plan-${plan.id}`}
              >
                <h2 id={`plan-${plan.id}`}>{plan.name}</h2>
                {current ? <p className="plan-badge">Current plan</p> : null}
                <p className="plan-price">{priceOf(plan.price)}</p>
                <p>{numbers.format(plan.dailyCredits)} credits a day</p>
                <p className="plan-models">
                  Models: {plan.models.map((model) => model.name).join(' · ')}
                </p>
                {plan.checkoutAllowed && !current ? (
                  <div
                    className="checkout"
                    role="group"
                    aria-label={`Subscribe to ${plan.name}`}
                  >
                    {PROVIDERS.map((provider) => (
                      <button
                        key={provider.id}
                        type="button"
                        onClick={() => void startCheckout(plan.id, provider.id)}
                        disabled={checkout !== null}
                      >
                        {checkout?.planId === plan.id &&
                        checkout.provider === provider.id
                          ? `Opening ${provider.label}…`
                          : `Subscribe with ${provider.label}`}
                      </button>
                    ))}
                  </div>
                ) : null}
                {!plan.checkoutAllowed &&
                !current &&
                plan.price.interval === null ? (
                  <p className="meta">Contact us for this plan.</p>
                ) : null}
                {checkoutError?.planId === plan.id ? (
                  <Notice kind="error">
                    {describeFailure(checkoutError.error)}
                  </Notice>
                ) : null}
              </li>
            );
          })}
        </ul>
      ) : null}
    </section>
  );
}

/**
 * The credits left today, in the top bar: the person's own, or with an organization chosen, what is left
 * for them in its pool. Read again after each answer (announceQuotaChanged), on a switch and on plan changes.
 */
export function QuotaBadge({ user }: { user: User }) {
  const { current: org, ready } = useOrgs();
  const [quota, setQuota] = useState<{
    owner: string | null;
    remaining: number;
    title: string;
    pool: boolean;
  } | null>(null);

  const orgId = org?.id ?? null;
  const orgName = org?.name ?? '';
  // The payer shown now: a reading of the one before a switch that answers late is dropped.
  const shown = useRef(orgId);
  useEffect(() => {
    shown.current = orgId;
  }, [orgId]);
  const read = useCallback(() => {
    const at = (iso: string) =>
      new Date(iso).toLocaleTimeString([], {
        hour: '2-digit',
        minute: '2-digit',
      });
    const reading = orgId
      ? api
          .GET('/v1/orgs/{id}/quota', { params: { path: { id: orgId } } })
          .then((result) => {
            const pool = unwrap(result);
            const limit = pool.pool.limit ?? 0;
            return {
              owner: orgId,
              remaining: pool.member.remaining,
              pool: limit > 0,
              title: `${orgName}'s pool: ${numbers.format(pool.pool.used)} of ${numbers.format(limit)} used today; resets at ${at(pool.resetsAt)}`,
            };
          })
      : api.GET('/v1/billing/quota').then((result) => {
          const own = unwrap(result);
          return {
            owner: null,
            remaining: own.remaining,
            pool: true,
            title: `${numbers.format(own.used)} of ${numbers.format(own.limit)} used today; resets at ${at(own.resetsAt)}`,
          };
        });
    return reading
      .then((value) => {
        if (value.owner === shown.current) setQuota(value);
      })
      .catch(() => {
        // The badge is a hint: the chat itself says when the quota is used up.
      });
  }, [orgId, orgName]);

  useEffect(() => {
    if (!ready) return;
    void read();
    const unsubscribe = onQuotaChanged(() => void read());
    const onFocus = () => void read();
    window.addEventListener('focus', onFocus);
    return () => {
      unsubscribe();
      window.removeEventListener('focus', onFocus);
    };
  }, [read, ready, user.id, user.plan.code]);

  // A reading of the other payer (just switched) is not shown.
  if (!quota || quota.owner !== orgId) return null;
  const where = org ? ` in ${org.name}` : '';
  return (
    <span
      className={`quota-badge${quota.remaining === 0 ? ' quota-empty' : ''}`}
      title={quota.title}
    >
      {org && !quota.pool
        ? `${org.name}: no credit pool`
        : `${numbers.format(quota.remaining)} ${quota.remaining === 1 ? 'credit' : 'credits'} left today${where}`}
    </span>
  );
}
