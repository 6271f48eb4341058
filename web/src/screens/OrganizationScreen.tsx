import { useState } from 'react';
import { api, unwrap, type User } from '../api/client';
import { canManage, ROLE_NAMES, type Organization } from '../api/orgs';
import type { ScreenProps } from '../session';
import { useOrgs } from '../org-context';
import { Notice } from './Notice';
import { ErrorNotice, Section } from './account/section';
import { InvitationsSection } from './orgs/InvitationsSection';
import { MembersSection } from './orgs/MembersSection';
import { PoolSection, UsageSection } from './orgs/PoolSection';
import { SeatsSection } from './orgs/SeatsSection';
import { ConfirmButton, numbers } from './orgs/shared';
import { useFormAction } from './use-form-action';
import './account.css';
import './orgs.css';

/**
 * Organizations: the current one (its pool today, members, invitations, usage, seats; what the person's
 * role allows), the person's organizations to switch to, and a new one.
 */
export function OrganizationScreen({ user }: ScreenProps) {
  const { orgs, current, ready } = useOrgs();
  return (
    <div className="account orgs">
      <h1>Organization</h1>
      {!ready ? (
        <p role="status">Loading your organizations…</p>
      ) : current ? (
        <CurrentOrganization key={current.id} org={current} user={user} />
      ) : (
        <p>
          You are working in your personal space: your chats use your own
          credits and Skills shows your own Skills. Switch to an organization,
          or create one, to share Skills and a credit pool with its members.
        </p>
      )}
      {orgs && orgs.length > 0 ? <YourOrganizations /> : null}
      <CreateOrganization />
    </div>
  );
}

function CurrentOrganization({ org, user }: { org: Organization; user: User }) {
  const manage = canManage(org);
  return (
    <>
      <OverviewSection org={org} />
      <PoolSection org={org} />
      <MembersSection org={org} user={user} />
      {manage ? <InvitationsSection org={org} /> : null}
      {manage ? <UsageSection org={org} /> : null}
      {manage ? <SeatsSection org={org} /> : null}
      <LeaveSection org={org} user={user} />
    </>
  );
}

function OverviewSection({ org }: { org: Organization }) {
  const { refresh } = useOrgs();
  const [name, setName] = useState(org.name);
  const [renamed, setRenamed] = useState(false);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setRenamed(false);
    unwrap(
      await api.PATCH('/v1/orgs/{id}', {
        params: { path: { id: org.id } },
        body: { name },
      }),
    );
    await refresh();
    setRenamed(true);
  });
  return (
    <Section title={org.name}>
      <dl className="org-facts">
        <dt>Your role</dt>
        <dd>{ROLE_NAMES[org.role]}</dd>
        <dt>Plan</dt>
        <dd>{org.plan.name}</dd>
        <dt>Seats</dt>
        <dd>{numbers.format(org.seats)}</dd>
        <dt>Members</dt>
        <dd>{numbers.format(org.memberCount)}</dd>
      </dl>
      {canManage(org) ? (
        <form className="account-form" onSubmit={onSubmit}>
          <label>
            Organization name
            <input
              name="name"
              required
              maxLength={100}
              value={name}
              onChange={(event) => setName(event.target.value)}
            />
          </label>
          <ErrorNotice error={error} />
          {renamed ? <Notice kind="info">Renamed.</Notice> : null}
          <button type="submit" disabled={busy || name.trim() === org.name}>
            {busy ? 'Renaming…' : 'Rename'}
          </button>
        </form>
      ) : null}
    </Section>
  );
}

/** Anyone leaves (the last owner cannot); an owner deletes the organization (not while it has a subscription). */
function LeaveSection({ org, user }: { org: Organization; user: User }) {
  const { refresh, select } = useOrgs();
  const [error, setError] = useState<unknown>(null);
  const act = async (request: () => Promise<unknown>) => {
    setError(null);
    try {
      await request();
      select(null);
      await refresh();
    } catch (failure) {
      setError(failure);
    }
  };
  const leave = () =>
    act(async () =>
      unwrap(
        await api.DELETE('/v1/orgs/{id}/members/{userId}', {
          params: { path: { id: org.id, userId: user.id } },
        }),
      ),
    );
  const remove = () =>
    act(async () =>
      unwrap(
        await api.DELETE('/v1/orgs/{id}', { params: { path: { id: org.id } } }),
      ),
    );
  return (
    <Section title={org.role === 'owner' ? 'Leave or delete' : 'Leave'}>
      <p>
        Leaving ends your access to {org.name}’s Skills and pool at once; an
        admin can invite you again.
        {org.role === 'owner'
          ? ' Deleting removes the organization with its Skills for every member.'
          : ''}
      </p>
      <ErrorNotice error={error} />
      <div className="org-actions">
        <ConfirmButton
          label={`Leave ${org.name}`}
          confirmLabel="Yes, leave"
          busyLabel="Leaving…"
          onConfirm={leave}
        >
          Leave {org.name}
        </ConfirmButton>
        {org.role === 'owner' ? (
          <ConfirmButton
            label={`Delete ${org.name}`}
            confirmLabel="Yes, delete it"
            busyLabel="Deleting…"
            onConfirm={remove}
          >
            Delete {org.name}
          </ConfirmButton>
        ) : null}
      </div>
    </Section>
  );
}

function YourOrganizations() {
  const { orgs, current, select } = useOrgs();
  return (
    <Section title="Your organizations">
      <ul className="org-list">
        <li>
          <span className="org-member-email">Personal</span>
          <span className="meta">your own credits and Skills</span>
          {current ? (
            <button
              type="button"
              className="secondary"
              onClick={() => select(null)}
            >
              Switch to Personal
            </button>
          ) : (
            <span className="badge badge-ok">Current</span>
          )}
        </li>
        {(orgs ?? []).map((org) => (
          <li key={org.id}>
            <span className="org-member-email">{org.name}</span>
            <span className="meta">
              {ROLE_NAMES[org.role]} · {org.plan.name} ·{' '}
              {numbers.format(org.memberCount)}{' '}
              {org.memberCount === 1 ? 'member' : 'members'}
            </span>
            {current?.id === org.id ? (
              <span className="badge badge-ok">Current</span>
            ) : (
              <button
                type="button"
                className="secondary"
                onClick={() => select(org.id)}
              >
                Switch to {org.name}
              </button>
            )}
          </li>
        ))}
      </ul>
    </Section>
  );
}

function CreateOrganization() {
  const { refresh, select } = useOrgs();
  const [name, setName] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setCreated(null);
    const org = unwrap(await api.POST('/v1/orgs', { body: { name } }));
    await refresh();
    select(org.id);
    setCreated(org.name);
    setName('');
  });
  return (
    <Section title="Create an organization">
      <form className="account-form" onSubmit={onSubmit}>
        <p>
          You become its owner. It starts on the Free plan: buy seats on the
          Team plan for a credit pool its members share.
        </p>
        <label>
          New organization name
          <input
            name="name"
            required
            maxLength={100}
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <ErrorNotice error={error} />
        {created ? (
          <Notice kind="info">
            {created} was created and is now your current organization.
          </Notice>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create organization'}
        </button>
      </form>
    </Section>
  );
}
