import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, unwrap } from '../../api/client';
import {
  canManage,
  hasPool,
  type Organization,
  type OrgQuota,
  type OrgUsage,
} from '../../api/orgs';
import { onQuotaChanged } from '../../api/quota-events';
import { ErrorNotice, Section } from '../account/section';
import { useFormAction } from '../use-form-action';
import { numbers } from './shared';

const credits = (value: number) =>
  `${numbers.format(value)} ${value === 1 ? 'credit' : 'credits'}`;

/** The pool today: the plan's daily credits times the seats, what is used and left, and the caller's own cap. */
export function PoolSection({ org }: { org: Organization }) {
  const [quota, setQuota] = useState<OrgQuota | null>(null);
  const [error, setError] = useState<unknown>(null);

  const read = useCallback(
    () =>
      api
        .GET('/v1/orgs/{id}/quota', { params: { path: { id: org.id } } })
        .then((result) => {
          setQuota(unwrap(result));
          setError(null);
        })
        .catch(setError),
    [org.id],
  );
  useEffect(() => {
    void read();
    return onQuotaChanged(() => void read());
  }, [read]);

  // The pool always has a limit (0 without a paid plan); only a member's cap may be none.
  const poolLimit = quota?.pool.limit ?? 0;
  const resets = quota
    ? new Date(quota.resetsAt).toLocaleTimeString([], {
        hour: '2-digit',
        minute: '2-digit',
      })
    : '';
  return (
    <Section title="Credit pool today">
      {!hasPool(org) ? (
        <p>
          {org.name} is on the {org.plan.name} plan, which has no credit pool:
          chats and Skill runs billed to it are refused until{' '}
          {canManage(org) ? 'you buy' : 'an admin or owner buys'} seats on the
          Team plan.
        </p>
      ) : null}
      {quota ? (
        <>
          {poolLimit > 0 ? (
            <meter
              className="org-meter"
              min={0}
              max={poolLimit}
              value={quota.pool.used + quota.pool.reserved}
              aria-label="Share of the pool used today"
            />
          ) : null}
          <dl className="org-facts">
            <dt>Daily pool</dt>
            <dd>
              {credits(poolLimit)} ({quota.plan.name},{' '}
              {numbers.format(quota.seats)}{' '}
              {quota.seats === 1 ? 'seat' : 'seats'})
            </dd>
            <dt>Used today</dt>
            <dd className="org-pool-used">{credits(quota.pool.used)}</dd>
            <dt>Held by answers in progress</dt>
            <dd>{credits(quota.pool.reserved)}</dd>
            <dt>Left today</dt>
            <dd>{credits(quota.pool.remaining)}</dd>
            <dt>Your daily cap</dt>
            <dd>
              {quota.member.limit === null
                ? 'None: the pool is your limit'
                : credits(quota.member.limit)}
            </dd>
            <dt>You used today</dt>
            <dd className="org-member-used">{credits(quota.member.used)}</dd>
            <dt>Left for you today</dt>
            <dd>{credits(quota.member.remaining)}</dd>
            <dt>Resets</dt>
            <dd>
              at <time dateTime={quota.resetsAt}>{resets}</time> (midnight UTC)
            </dd>
          </dl>
        </>
      ) : error ? null : (
        <p role="status">Loading the pool…</p>
      )}
      <ErrorNotice error={error} />
      <div className="org-actions">
        <button type="button" className="secondary" onClick={() => void read()}>
          Refresh the pool
        </button>
      </div>
    </Section>
  );
}

/** YYYY-MM-DD of a UTC day: the usage report counts UTC days. */
function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Credits per member per UTC day (admins and owners), from the ledger. */
export function UsageSection({ org }: { org: Organization }) {
  const [from, setFrom] = useState(() =>
    utcDay(new Date(Date.now() - 6 * 86_400_000)),
  );
  const [to, setTo] = useState(() => utcDay(new Date()));
  const [usage, setUsage] = useState<OrgUsage | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);

  const load = useCallback(
    (range: { from: string; to: string }) =>
      api
        .GET('/v1/orgs/{id}/usage', {
          params: { path: { id: org.id }, query: range },
        })
        .then((result) => setUsage(unwrap(result))),
    [org.id],
  );
  // The first report: the last 7 days, as the form starts.
  const [initial] = useState({ from, to });
  useEffect(() => {
    load(initial).catch(setLoadError);
  }, [load, initial]);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setLoadError(null);
    await load({ from, to });
  });

  const totals = useMemo(() => {
    const byMember = new Map<
      string,
      { email: string | null; credits: number; runs: number }
    >();
    for (const row of usage?.data ?? []) {
      const total = byMember.get(row.userId) ?? {
        email: row.email,
        credits: 0,
        runs: 0,
      };
      total.credits += row.credits;
      total.runs += row.runs;
      byMember.set(row.userId, total);
    }
    return [...byMember.entries()].sort((a, b) => b[1].credits - a[1].credits);
  }, [usage]);

  return (
    <Section title="Usage">
      <form className="org-range" onSubmit={onSubmit}>
        <label>
          From
          <input
            type="date"
            required
            value={from}
            max={to}
            onChange={(event) => setFrom(event.target.value)}
          />
        </label>
        <label>
          To
          <input
            type="date"
            required
            value={to}
            min={from}
            onChange={(event) => setTo(event.target.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Loading…' : 'Show usage'}
        </button>
      </form>
      <p className="meta">
        Credits billed to the pool, per member per UTC day.
      </p>
      <ErrorNotice error={error ?? loadError} />
      {usage === null ? (
        error || loadError ? null : (
          <p role="status">Loading the usage…</p>
        )
      ) : usage.data.length === 0 ? (
        <p>
          No usage from {usage.from} to {usage.to}.
        </p>
      ) : (
        <>
          <h3>
            Totals from {usage.from} to {usage.to}
          </h3>
          <ul className="org-usage-totals">
            {totals.map(([userId, total]) => (
              <li key={userId}>
                <span className="org-member-email">
                  {total.email ?? 'Deleted account'}
                </span>
                : {credits(total.credits)} in {numbers.format(total.runs)}{' '}
                {total.runs === 1 ? 'run' : 'runs'}
              </li>
            ))}
          </ul>
          <div
            className="org-table-scroll"
            role="region"
            aria-label="Usage per member per day"
            tabIndex={0}
          >
            <table className="org-table">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Member</th>
                  <th scope="col">Credits</th>
                  <th scope="col">Runs</th>
                </tr>
              </thead>
              <tbody>
                {usage.data.map((row) => (
                  <tr key={`${row.day}-${row.userId}`}>
                    <td>{row.day}</td>
                    <td className="org-member-email">
                      {row.email ?? 'Deleted account'}
                    </td>
                    <td>{numbers.format(row.credits)}</td>
                    <td>{numbers.format(row.runs)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Section>
  );
}
