/**
 * The subscription state machine, as pure functions: how one provider event moves a stored subscription,
 * and whether a subscription grants its plan at a given time. The webhook service and the sweeper apply
 * them inside transactions; the unit tests beside this file pin every rule.
 * docs/adr/0049-subscription-state-machine.md
 */
export const SUBSCRIPTION_STATUSES = [
  'active',
  'past_due',
  'canceled',
  'incomplete',
  'paused',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** What we store about a subscription (the part events change). */
export interface SubscriptionState {
  status: SubscriptionStatus;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  canceledAt: Date | null;
  /** Provider time of the first event of the current past-due run (null unless past due). */
  pastDueSince: Date | null;
  providerCustomerId: string | null;
  /** Provider time of the newest event applied; older events are stale. */
  lastEventAt: Date;
}

/**
 * What one verified provider event says about a subscription. Undefined fields are unknown to that event
 * (a Paddle transaction knows the paid period, not a scheduled cancellation) and keep their stored value.
 */
export interface SubscriptionSnapshot {
  providerSubscriptionId: string;
  status: SubscriptionStatus;
  currentPeriodEnd?: Date | null;
  cancelAtPeriodEnd?: boolean;
  canceledAt?: Date | null;
  providerCustomerId?: string | null;
  /**
   * The provider's id of the checkout that created it (Stripe Checkout Session, Paddle transaction): matched
   * against the sessions we opened, it is what links a new subscription to its buyer.
   */
  checkoutSessionId?: string | null;
  /**
   * Our checkout id as echoed in the subscription's metadata. Buyers can write Paddle's custom data, so it
   * never links anything; it only tells an event that came before the link apart from a foreign one.
   */
  checkoutHint?: string | null;
  /**
   * The quantity of the subscription's item as the provider has it now (an organization's seats). Only
   * applied with the rest of the event: a stale event's quantity changes nothing.
   */
  quantity?: number;
}

/**
 * Within one provider timestamp (Stripe's are whole seconds, so a checkout's events often share one), the
 * order of delivery says nothing; a tie is only applied when it moves forward in this order.
 */
const TIE_RANK: Record<SubscriptionStatus, number> = {
  incomplete: 0,
  active: 1,
  past_due: 1,
  paused: 1,
  canceled: 2,
};

/**
 * The state after applying `snapshot`, stamped `occurredAt` by the provider, or null when the event must
 * change nothing: the subscription is canceled (terminal at both providers, nothing resurrects it) or the
 * event is older than the newest one applied (events arrive out of order and are redelivered).
 */
export function applySnapshot(
  current: SubscriptionState | null,
  snapshot: SubscriptionSnapshot,
  occurredAt: Date,
): SubscriptionState | null {
  if (current) {
    if (current.status === 'canceled') return null;
    const age = occurredAt.getTime() - current.lastEventAt.getTime();
    if (age < 0) return null;
    if (age === 0 && TIE_RANK[snapshot.status] < TIE_RANK[current.status])
      return null;
  }
  return {
    status: snapshot.status,
    // A period only moves forward: a renewal extends it, a late copy of an earlier period cannot shorten it.
    currentPeriodEnd: latest(
      current?.currentPeriodEnd ?? null,
      snapshot.currentPeriodEnd ?? null,
    ),
    cancelAtPeriodEnd:
      snapshot.cancelAtPeriodEnd ?? current?.cancelAtPeriodEnd ?? false,
    canceledAt:
      snapshot.canceledAt !== undefined
        ? snapshot.canceledAt
        : (current?.canceledAt ?? null),
    pastDueSince:
      snapshot.status !== 'past_due'
        ? null
        : current?.status === 'past_due'
          ? current.pastDueSince
          : occurredAt,
    providerCustomerId:
      snapshot.providerCustomerId ?? current?.providerCustomerId ?? null,
    lastEventAt:
      current && current.lastEventAt > occurredAt
        ? current.lastEventAt
        : occurredAt,
  };
}

/**
 * Whether the subscription gives its plan at `now`:
 * - active: until the end of the paid period plus `graceMs` (a renewal's webhook may come late), or exactly
 *   the period end when it is set to cancel then;
 * - past due (a renewal failed; providers have already moved the period on): for `graceMs` after it became
 *   past due, and never beyond a period end it is set to cancel at;
 * - canceled, incomplete, paused: never.
 */
export function grantsPlan(
  state: PlanGrantFields,
  now: Date,
  graceMs: number,
): boolean {
  const end = grantEndsAt(state, graceMs);
  return end === null || now < end;
}

export type PlanGrantFields = Pick<
  SubscriptionState,
  'status' | 'currentPeriodEnd' | 'cancelAtPeriodEnd' | 'pastDueSince'
>;

/** Never granting: the start of time, so `now < end` is false whatever the clocks say. */
const NEVER = new Date(0);

/** When the subscription stops granting its plan (the rules above); null while it is open-ended. Stored as `grantsUntil`. */
export function grantEndsAt(
  state: PlanGrantFields,
  graceMs: number,
): Date | null {
  const periodEnd = state.currentPeriodEnd?.getTime() ?? null;
  const cancelEnd =
    state.cancelAtPeriodEnd && periodEnd !== null ? periodEnd : Infinity;
  let end: number;
  if (state.status === 'active')
    end =
      periodEnd === null ? Infinity : Math.min(cancelEnd, periodEnd + graceMs);
  else if (state.status === 'past_due') {
    const since = state.pastDueSince?.getTime() ?? periodEnd;
    end = Math.min(cancelEnd, since === null ? Infinity : since + graceMs);
  } else return NEVER;
  return end === Infinity ? null : new Date(end);
}

function latest(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a > b ? a : b;
}
