import { useEffect, useState } from 'react';
import { api, unwrap, type Plan, type Schemas } from '../../api/client';
import {
  changeSeats,
  hasPool,
  startSeatCheckout,
  type SeatChange,
  type Organization,
} from '../../api/orgs';
import { useOrgs } from '../../org-context';
import { Notice } from '../Notice';
import { priceOf } from '../PlansScreen';
import { ErrorNotice, Section } from '../account/section';
import { useFormAction } from '../use-form-action';
import { numbers } from './shared';

type Provider = Schemas['CheckoutRequestDto']['provider'];
const PROVIDER_NAMES: Record<Provider, string> = {
  stripe: 'Stripe',
  paddle: 'Paddle',
};
/** The plan an organization buys seats on. */
const TEAM_PLAN = 'team';
const MAX_SEATS = 1000;

/**
 * Seats (admins and owners): an organization without a paid plan buys seats on the Team plan through Stripe
 * or Paddle (sent to the provider's page); one with a subscription changes its number of seats; seats an
 * administrator set are shown as they are.
 */
export function SeatsSection({ org }: { org: Organization }) {
  const [team, setTeam] = useState<Plan | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    void api
      .GET('/v1/plans')
      .then((result) =>
        setTeam(
          unwrap(result).data.find((plan) => plan.code === TEAM_PLAN) ?? null,
        ),
      )
      .catch(setError);
  }, []);
  return (
    <Section title="Seats">
      <ErrorNotice error={error} />
      {org.subscription ? (
        <SeatChange org={org} />
      ) : hasPool(org) ? (
        <p>
          {org.name} has {org.seats} seats on the {org.plan.name} plan, set by
          an administrator: contact us to change them.
        </p>
      ) : team === undefined ? (
        error ? null : (
          <p role="status">Loading the Team plan…</p>
        )
      ) : team === null || !team.checkoutAllowed ? (
        <p>The Team plan cannot be bought here: contact us for seats.</p>
      ) : (
        <SeatCheckout org={org} team={team} />
      )}
    </Section>
  );
}

function SeatCheckout({ org, team }: { org: Organization; team: Plan }) {
  const least = Math.max(1, org.memberCount);
  const [seats, setSeats] = useState(String(least));
  const [provider, setProvider] = useState<Provider>('stripe');
  const { error, busy, onSubmit } = useFormAction(async () => {
    const url = await startSeatCheckout({
      planId: team.id,
      provider,
      organizationId: org.id,
      seats: Number(seats),
    });
    // To the provider's payment page; the seats apply when its webhook confirms the payment.
    window.location.assign(url);
  });
  const count = Number(seats);
  const total =
    Number.isInteger(count) && count >= 1
      ? priceOf({ ...team.price, amount: team.price.amount * count })
      : null;
  return (
    <form className="account-form" onSubmit={onSubmit}>
      <p>
        {org.name} is on the {org.plan.name} plan. The {team.name} plan gives
        each seat {numbers.format(team.dailyCredits)} credits a day, pooled for
        all members, at {priceOf(team.price)} per seat. Each member takes a
        seat.
      </p>
      <label>
        Seats
        <input
          type="number"
          inputMode="numeric"
          min={least}
          max={MAX_SEATS}
          step={1}
          required
          value={seats}
          onChange={(event) => setSeats(event.target.value)}
        />
      </label>
      {total ? <p className="meta">Total: {total}</p> : null}
      <fieldset className="org-choice">
        <legend>Pay with</legend>
        {(['stripe', 'paddle'] as const).map((id) => (
          <label key={id}>
            <input
              type="radio"
              name="provider"
              value={id}
              checked={provider === id}
              onChange={() => setProvider(id)}
            />
            {PROVIDER_NAMES[id]}
          </label>
        ))}
      </fieldset>
      <ErrorNotice error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Opening the checkout…' : `Buy ${team.name} seats`}
      </button>
    </form>
  );
}

function SeatChange({ org }: { org: Organization }) {
  const { refresh } = useOrgs();
  const [seats, setSeats] = useState(String(org.seats));
  const [sent, setSent] = useState<SeatChange | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setSent(null);
    setSent(await changeSeats(org.id, Number(seats)));
    // The provider confirms the change by its webhook: read the organization again after a moment.
    setTimeout(() => void refresh(), 3000);
  });
  return (
    <form className="account-form" onSubmit={onSubmit}>
      <p>
        {org.name} is on the {org.plan.name} plan with{' '}
        {numbers.format(org.seats)} {org.seats === 1 ? 'seat' : 'seats'};{' '}
        {numbers.format(org.memberCount)} taken.
      </p>
      <label>
        Number of seats
        <input
          type="number"
          inputMode="numeric"
          min={Math.max(1, org.memberCount)}
          max={MAX_SEATS}
          step={1}
          required
          value={seats}
          onChange={(event) => setSeats(event.target.value)}
        />
      </label>
      <ErrorNotice error={error} />
      {sent !== null ? (
        <Notice kind="info">
          {PROVIDER_NAMES[sent.provider]} was asked for{' '}
          {numbers.format(sent.seats)} seats (you have{' '}
          {numbers.format(sent.currentSeats)} now): the change applies once it
          confirms it.
        </Notice>
      ) : null}
      <button type="submit" disabled={busy || Number(seats) === org.seats}>
        {busy ? 'Changing…' : 'Change seats'}
      </button>
    </form>
  );
}
