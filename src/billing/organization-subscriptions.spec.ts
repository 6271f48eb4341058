import { LiveOrganizationSubscription } from './billing.repository';
import {
  renewingRival,
  subscriptionForSeatChange,
} from './organization-subscriptions';

function subscription(
  id: string,
  overrides: Partial<LiveOrganizationSubscription> = {},
): LiveOrganizationSubscription {
  return {
    id,
    provider: 'stripe',
    providerSubscriptionId: `sub_${id}`,
    seats: 3,
    status: 'active',
    cancelAtPeriodEnd: false,
    ...overrides,
  };
}

describe('subscriptionForSeatChange', () => {
  it("takes the plan's subscription while it renews", () => {
    const plans = subscription('a');
    expect(subscriptionForSeatChange([subscription('b'), plans], 'a')).toBe(
      plans,
    );
  });

  it('takes a renewing one over the plan’s when the plan’s ends with its period', () => {
    const ending = subscription('a', { cancelAtPeriodEnd: true });
    const renewing = subscription('b');
    expect(subscriptionForSeatChange([renewing, ending], 'a')).toBe(renewing);
  });

  it("falls back to the plan's, then the newest, and is null without any", () => {
    const ending = subscription('a', { cancelAtPeriodEnd: true });
    const newest = subscription('c', { cancelAtPeriodEnd: true });
    expect(subscriptionForSeatChange([newest, ending], 'a')).toBe(ending);
    expect(subscriptionForSeatChange([newest, ending], null)).toBe(newest);
    expect(subscriptionForSeatChange([], 'a')).toBeNull();
  });
});

describe('renewingRival', () => {
  const newcomer = {
    provider: 'stripe' as const,
    providerSubscriptionId: 'sub_new',
    status: 'active' as const,
    storedStatus: null,
  };

  it('names the subscription already renewing when a new one goes live', () => {
    const first = subscription('a');
    expect(renewingRival(newcomer, [first])).toBe(first);
  });

  it('sees no rival in one that ends with its period, nor for a subscription already live', () => {
    expect(
      renewingRival(newcomer, [subscription('a', { cancelAtPeriodEnd: true })]),
    ).toBeNull();
    expect(
      renewingRival({ ...newcomer, storedStatus: 'active' }, [
        subscription('a'),
      ]),
    ).toBeNull();
  });
});
