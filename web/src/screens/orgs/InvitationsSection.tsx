import { useCallback, useEffect, useState } from 'react';
import { api, unwrap } from '../../api/client';
import {
  ROLE_NAMES,
  type Invitation,
  type Organization,
  type OrgRole,
} from '../../api/orgs';
import { Notice } from '../Notice';
import { ErrorNotice, Section } from '../account/section';
import { useFormAction } from '../use-form-action';
import { ConfirmButton, dateOf } from './shared';

/** Invite by email with a role (a mailed link, valid 7 days), and the pending invitations, each revocable. */
export function InvitationsSection({ org }: { org: Organization }) {
  const [pending, setPending] = useState<Invitation[] | null>(null);
  const [listError, setListError] = useState<unknown>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<OrgRole>('member');
  const [sent, setSent] = useState<string | null>(null);

  const load = useCallback(
    () =>
      api
        .GET('/v1/orgs/{id}/invitations', { params: { path: { id: org.id } } })
        .then((result) => {
          setPending(unwrap(result).data);
          setListError(null);
        })
        .catch(setListError),
    [org.id],
  );
  useEffect(() => void load(), [load]);

  const { error, busy, onSubmit } = useFormAction(async () => {
    setSent(null);
    const invitation = unwrap(
      await api.POST('/v1/orgs/{id}/invitations', {
        params: { path: { id: org.id } },
        body: { email, role },
      }),
    );
    setSent(invitation.email);
    setEmail('');
    await load();
  });

  const revoke = async (invitation: Invitation) => {
    setListError(null);
    try {
      unwrap(
        await api.DELETE('/v1/orgs/{id}/invitations/{invitationId}', {
          params: { path: { id: org.id, invitationId: invitation.id } },
        }),
      );
      await load();
    } catch (failure) {
      setListError(failure);
    }
  };

  const roles: OrgRole[] =
    org.role === 'owner' ? ['member', 'admin', 'owner'] : ['member', 'admin'];
  return (
    <Section title="Invitations">
      <form className="account-form" onSubmit={onSubmit}>
        <label>
          Email address to invite
          <input
            type="email"
            name="email"
            autoComplete="off"
            required
            maxLength={254}
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <label>
          Their role
          <select
            value={role}
            onChange={(event) => setRole(event.target.value as OrgRole)}
          >
            {roles.map((option) => (
              <option key={option} value={option}>
                {ROLE_NAMES[option]}
              </option>
            ))}
          </select>
        </label>
        <p className="meta">
          We mail them a link, valid for 7 days. Only an account with that
          verified address can accept it.
        </p>
        <ErrorNotice error={error} />
        {sent ? <Notice kind="info">Invitation sent to {sent}.</Notice> : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : 'Send invitation'}
        </button>
      </form>
      <h3>Pending invitations</h3>
      <ErrorNotice error={listError} />
      {pending === null ? (
        listError ? null : (
          <p role="status">Loading the invitations…</p>
        )
      ) : pending.length === 0 ? (
        <p>No pending invitations.</p>
      ) : (
        <ul className="org-invitations" aria-label="Pending invitations">
          {pending.map((invitation) => (
            <li key={invitation.id}>
              <div>
                <span className="org-member-email">{invitation.email}</span>{' '}
                <span className="badge org-role">
                  {ROLE_NAMES[invitation.role]}
                </span>
                <p className="meta">
                  Expires{' '}
                  <time dateTime={invitation.expiresAt}>
                    {dateOf(invitation.expiresAt)}
                  </time>
                </p>
              </div>
              <ConfirmButton
                label={`Revoke the invitation to ${invitation.email}`}
                confirmLabel="Yes, revoke"
                busyLabel="Revoking…"
                onConfirm={() => revoke(invitation)}
              >
                Revoke
              </ConfirmButton>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
