import { useCallback, useEffect, useState } from 'react';
import { api, unwrap, type User } from '../../api/client';
import {
  canManage,
  ROLE_NAMES,
  type Organization,
  type OrgMember,
  type OrgRole,
} from '../../api/orgs';
import { useOrgs } from '../../org-context';
import { Notice } from '../Notice';
import { ErrorNotice, Section } from '../account/section';
import { useFormAction } from '../use-form-action';
import { ConfirmButton, dateOf, numbers } from './shared';

/** The members with their roles and daily caps; admins and owners change a role or a cap, or remove someone. */
export function MembersSection({
  org,
  user,
}: {
  org: Organization;
  user: User;
}) {
  const { refresh } = useOrgs();
  const [members, setMembers] = useState<OrgMember[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = useCallback(
    () =>
      api
        .GET('/v1/orgs/{id}/members', { params: { path: { id: org.id } } })
        .then((result) => {
          setMembers(unwrap(result).data);
          setError(null);
        })
        .catch(setError),
    [org.id],
  );
  useEffect(() => void load(), [load]);

  const remove = async (member: OrgMember) => {
    setError(null);
    try {
      unwrap(
        await api.DELETE('/v1/orgs/{id}/members/{userId}', {
          params: { path: { id: org.id, userId: member.userId } },
        }),
      );
      await Promise.all([load(), refresh()]);
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <Section title="Members">
      <ErrorNotice error={error} />
      {members === null ? (
        error ? null : (
          <p role="status">Loading the members…</p>
        )
      ) : (
        <ul className="org-members" aria-label={`Members of ${org.name}`}>
          {members.map((member) => (
            <MemberItem
              key={member.userId}
              org={org}
              member={member}
              isYou={member.userId === user.id}
              onChanged={load}
              onRemove={() => remove(member)}
            />
          ))}
        </ul>
      )}
    </Section>
  );
}

function MemberItem({
  org,
  member,
  isYou,
  onChanged,
  onRemove,
}: {
  org: Organization;
  member: OrgMember;
  isYou: boolean;
  onChanged: () => Promise<void>;
  onRemove: () => Promise<void>;
}) {
  const name = member.email ?? 'Deleted account';
  // An admin changes admins and members; only an owner makes, unmakes or removes owners.
  const actorIsOwner = org.role === 'owner';
  const roles: OrgRole[] = actorIsOwner
    ? ['member', 'admin', 'owner']
    : member.role === 'owner'
      ? ['owner']
      : ['member', 'admin'];
  const manage = canManage(org);
  return (
    <li>
      <div className="org-member-head">
        <span className="org-member-email">
          {name}
          {isYou ? ' (you)' : ''}
        </span>
        <span className="badge org-role">{ROLE_NAMES[member.role]}</span>
      </div>
      <p className="meta">
        Daily cap:{' '}
        {member.dailyCreditLimit === null
          ? 'none'
          : `${numbers.format(member.dailyCreditLimit)} credits`}{' '}
        · joined{' '}
        <time dateTime={member.joinedAt}>{dateOf(member.joinedAt)}</time>
      </p>
      {manage ? (
        <details className="org-member-edit">
          <summary>Change {name}</summary>
          <MemberForm
            orgId={org.id}
            member={member}
            roles={roles}
            onChanged={onChanged}
          />
          {!isYou && (actorIsOwner || member.role !== 'owner') ? (
            <div className="org-actions">
              <ConfirmButton
                label={`Remove ${name}`}
                confirmLabel={`Yes, remove ${name}`}
                busyLabel="Removing…"
                onConfirm={onRemove}
              >
                Remove from {org.name}
              </ConfirmButton>
            </div>
          ) : null}
        </details>
      ) : null}
    </li>
  );
}

function MemberForm({
  orgId,
  member,
  roles,
  onChanged,
}: {
  orgId: string;
  member: OrgMember;
  roles: OrgRole[];
  onChanged: () => Promise<void>;
}) {
  const [role, setRole] = useState<OrgRole>(member.role);
  const [cap, setCap] = useState(
    member.dailyCreditLimit === null ? '' : String(member.dailyCreditLimit),
  );
  const [saved, setSaved] = useState(false);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setSaved(false);
    unwrap(
      await api.PATCH('/v1/orgs/{id}/members/{userId}', {
        params: { path: { id: orgId, userId: member.userId } },
        body: {
          role,
          dailyCreditLimit: cap.trim() === '' ? null : Number(cap),
        },
      }),
    );
    setSaved(true);
    await onChanged();
  });
  const capHelp = `cap-help-${member.userId}`;
  return (
    <form className="account-form" onSubmit={onSubmit}>
      <label>
        Role
        <select
          value={role}
          disabled={roles.length < 2}
          onChange={(event) => setRole(event.target.value as OrgRole)}
        >
          {roles.map((option) => (
            <option key={option} value={option}>
              {ROLE_NAMES[option]}
            </option>
          ))}
        </select>
      </label>
      <label>
        Daily credit cap
        <input
          type="number"
          inputMode="numeric"
          min={0}
          step={1}
          value={cap}
          aria-describedby={capHelp}
          onChange={(event) => setCap(event.target.value)}
        />
      </label>
      <p id={capHelp} className="meta">
        Credits of the pool this member may spend per day. Empty: no cap of
        their own.
      </p>
      <ErrorNotice error={error} />
      {saved ? <Notice kind="info">Saved.</Notice> : null}
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : 'Save changes'}
      </button>
    </form>
  );
}
