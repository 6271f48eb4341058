import {
  applySnapshot,
  grantEndsAt,
  grantsPlan,
  SubscriptionState,
} from './subscription-state';

const at = (iso: string) => new Date(iso);
const DAY = 24 * 3600 * 1000;

function state(overrides: Partial<SubscriptionState> = {}): SubscriptionState {
  return {
    status: 'active',
    currentPeriodEnd: at('2026-12-01T00:00:00Z'),
    cancelAtPeriodEnd: false,
    canceledAt: null,
    pastDueSince: null,
    providerCustomerId: 'cus_1',
    lastEventAt: at('2026-11-01T00:00:00Z'),
    ...overrides,
  };
}

describe('applySnapshot', () => {
  it('creates the state of a subscription seen for the first time', () => {
    const next = applySnapshot(
      null,
      {
        providerSubscriptionId: 's',
        status: 'active',
        currentPeriodEnd: at('2026-12-01T00:00:00Z'),
        providerCustomerId: 'cus_9',
      },
      at('2026-11-01T00:00:00Z'),
    );
    expect(next).toEqual({
      status: 'active',
      currentPeriodEnd: at('2026-12-01T00:00:00Z'),
      cancelAtPeriodEnd: false,
      canceledAt: null,
      pastDueSince: null,
      providerCustomerId: 'cus_9',
      lastEventAt: at('2026-11-01T00:00:00Z'),
    });
  });

  it('extends the period on renewal', () => {
    const next = applySnapshot(
      state(),
      {
        providerSubscriptionId: 's',
        status: 'active',
        currentPeriodEnd: at('2027-01-01T00:00:00Z'),
      },
      at('2026-12-01T00:00:05Z'),
    );
    expect(next?.currentPeriodEnd).toEqual(at('2027-01-01T00:00:00Z'));
    expect(next?.lastEventAt).toEqual(at('2026-12-01T00:00:05Z'));
  });

  it('ignores an event older than the newest applied one', () => {
    expect(
      applySnapshot(
        state({ status: 'past_due' }),
        { providerSubscriptionId: 's', status: 'active' },
        at('2026-10-31T23:59:59Z'),
      ),
    ).toBeNull();
  });

  it('never resurrects a canceled subscription, whatever the event time', () => {
    const canceled = state({
      status: 'canceled',
      canceledAt: at('2026-11-02T00:00:00Z'),
      lastEventAt: at('2026-11-02T00:00:00Z'),
    });
    expect(
      applySnapshot(
        canceled,
        { providerSubscriptionId: 's', status: 'active' },
        at('2026-11-01T00:00:00Z'),
      ),
    ).toBeNull();
    expect(
      applySnapshot(
        canceled,
        { providerSubscriptionId: 's', status: 'active' },
        at('2026-11-03T00:00:00Z'),
      ),
    ).toBeNull();
  });

  it('applies a same-instant event only when it moves forward', () => {
    const active = state();
    expect(
      applySnapshot(
        active,
        { providerSubscriptionId: 's', status: 'incomplete' },
        active.lastEventAt,
      ),
    ).toBeNull();
    expect(
      applySnapshot(
        active,
        { providerSubscriptionId: 's', status: 'canceled' },
        active.lastEventAt,
      )?.status,
    ).toBe('canceled');
    expect(
      applySnapshot(
        state({ status: 'incomplete' }),
        { providerSubscriptionId: 's', status: 'active' },
        active.lastEventAt,
      )?.status,
    ).toBe('active');
  });

  it('never shortens the paid period', () => {
    const next = applySnapshot(
      state(),
      {
        providerSubscriptionId: 's',
        status: 'active',
        currentPeriodEnd: at('2026-11-15T00:00:00Z'),
      },
      at('2026-11-02T00:00:00Z'),
    );
    expect(next?.currentPeriodEnd).toEqual(at('2026-12-01T00:00:00Z'));
  });

  it('keeps what an event does not know', () => {
    const scheduled = state({
      cancelAtPeriodEnd: true,
      canceledAt: at('2026-11-05T00:00:00Z'),
    });
    const next = applySnapshot(
      scheduled,
      {
        providerSubscriptionId: 's',
        status: 'active',
        currentPeriodEnd: at('2026-12-01T00:00:00Z'),
      },
      at('2026-11-06T00:00:00Z'),
    );
    expect(next).toMatchObject({
      cancelAtPeriodEnd: true,
      canceledAt: at('2026-11-05T00:00:00Z'),
      providerCustomerId: 'cus_1',
    });
  });

  it('stamps when a subscription became past due and keeps that through further past-due events', () => {
    const first = applySnapshot(
      state(),
      { providerSubscriptionId: 's', status: 'past_due' },
      at('2026-12-01T01:00:00Z'),
    );
    expect(first?.pastDueSince).toEqual(at('2026-12-01T01:00:00Z'));
    const retry = applySnapshot(
      first,
      { providerSubscriptionId: 's', status: 'past_due' },
      at('2026-12-02T01:00:00Z'),
    );
    expect(retry?.pastDueSince).toEqual(at('2026-12-01T01:00:00Z'));
    expect(
      applySnapshot(
        retry,
        { providerSubscriptionId: 's', status: 'active' },
        at('2026-12-03T01:00:00Z'),
      )?.pastDueSince,
    ).toBeNull();
  });

  it('clears a scheduled cancellation when the event says so', () => {
    const scheduled = state({
      cancelAtPeriodEnd: true,
      canceledAt: at('2026-11-05T00:00:00Z'),
    });
    const next = applySnapshot(
      scheduled,
      {
        providerSubscriptionId: 's',
        status: 'active',
        cancelAtPeriodEnd: false,
        canceledAt: null,
      },
      at('2026-11-06T00:00:00Z'),
    );
    expect(next).toMatchObject({ cancelAtPeriodEnd: false, canceledAt: null });
  });
});

describe('grantsPlan', () => {
  const grace = 3 * DAY;
  const periodEnd = at('2026-12-01T00:00:00Z');

  it('grants an active subscription through its period and the grace after it', () => {
    const active = {
      status: 'active' as const,
      currentPeriodEnd: periodEnd,
      cancelAtPeriodEnd: false,
      pastDueSince: null,
    };
    expect(grantsPlan(active, at('2026-11-30T23:59:59Z'), grace)).toBe(true);
    expect(grantsPlan(active, at('2026-12-03T23:59:59Z'), grace)).toBe(true);
    expect(grantsPlan(active, at('2026-12-04T00:00:00Z'), grace)).toBe(false);
  });

  it('stops exactly at period end when the subscription is set to cancel then', () => {
    const canceling = {
      status: 'active' as const,
      currentPeriodEnd: periodEnd,
      cancelAtPeriodEnd: true,
      pastDueSince: null,
    };
    expect(grantsPlan(canceling, at('2026-11-30T23:59:59Z'), grace)).toBe(true);
    expect(grantsPlan(canceling, periodEnd, grace)).toBe(false);
  });

  it('keeps a past-due subscription for the grace after it became past due, though its period runs on', () => {
    const since = at('2026-12-01T00:00:00Z');
    const pastDue = {
      status: 'past_due' as const,
      currentPeriodEnd: at('2027-01-01T00:00:00Z'),
      cancelAtPeriodEnd: false,
      pastDueSince: since,
    };
    expect(grantsPlan(pastDue, at('2026-12-03T23:59:59Z'), grace)).toBe(true);
    expect(grantsPlan(pastDue, at('2026-12-04T00:00:00Z'), grace)).toBe(false);
  });

  it('never grants canceled, incomplete or paused subscriptions', () => {
    for (const status of ['canceled', 'incomplete', 'paused'] as const) {
      expect(
        grantsPlan(
          {
            status,
            currentPeriodEnd: periodEnd,
            cancelAtPeriodEnd: false,
            pastDueSince: null,
          },
          at('2026-11-10T00:00:00Z'),
          grace,
        ),
      ).toBe(false);
    }
  });

  it('grants an active subscription whose period the provider has not told yet', () => {
    expect(
      grantsPlan(
        {
          status: 'active',
          currentPeriodEnd: null,
          cancelAtPeriodEnd: false,
          pastDueSince: null,
        },
        at('2026-11-10T00:00:00Z'),
        grace,
      ),
    ).toBe(true);
  });
});

describe('grantEndsAt (stored as grantsUntil for the sweeper)', () => {
  const grace = 3 * DAY;
  it('is the period end plus grace, the period end when canceling, open-ended without a period, the epoch when not granting', () => {
    const base = {
      status: 'active' as const,
      currentPeriodEnd: at('2026-12-01T00:00:00Z'),
      cancelAtPeriodEnd: false,
      pastDueSince: null,
    };
    expect(grantEndsAt(base, grace)).toEqual(at('2026-12-04T00:00:00Z'));
    expect(grantEndsAt({ ...base, cancelAtPeriodEnd: true }, grace)).toEqual(
      at('2026-12-01T00:00:00Z'),
    );
    expect(grantEndsAt({ ...base, currentPeriodEnd: null }, grace)).toBeNull();
    expect(
      grantEndsAt(
        {
          ...base,
          status: 'past_due',
          pastDueSince: at('2026-11-10T00:00:00Z'),
        },
        grace,
      ),
    ).toEqual(at('2026-11-13T00:00:00Z'));
    expect(grantEndsAt({ ...base, status: 'canceled' }, grace)).toEqual(
      new Date(0),
    );
  });
});
