import { useState } from 'react';
import { api, ApiFailure, describeFailure, unwrap } from '../api/client';
import { ROLE_NAMES, type Organization } from '../api/orgs';
import type { ScreenProps } from '../session';
import {
  forgetInvitation,
  INVITATION_PATH,
  pendingInvitation,
} from '../invitation';
import { navigate } from '../navigation';
import { useOrgs } from '../org-context';
import { RouteLink } from './AuthScreens';
import { Notice } from './Notice';
import { useFormAction } from './use-form-action';
import './account.css';
import './orgs.css';

/** Failures after which the link can never work: it is forgotten. */
const FINAL = new Set(['invitation_gone', 'not_found', 'already_member']);

/**
 * The page of a mailed invitation (/invitations/accept?token=…), signed in: the person accepts it with the
 * account they are signed in with, which must have the invited, verified address.
 */
export function AcceptInvitationScreen({ user }: ScreenProps) {
  const { refresh, select } = useOrgs();
  const [token] = useState(
    () =>
      new URLSearchParams(window.location.search).get('token') ??
      pendingInvitation() ??
      '',
  );
  const [joined, setJoined] = useState<Organization | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    try {
      const org = unwrap(
        await api.POST('/v1/orgs/invitations/accept', { body: { token } }),
      );
      forgetInvitation();
      // The token is spent: a reload must not offer it again.
      window.history.replaceState(null, '', INVITATION_PATH);
      await refresh();
      select(org.id);
      setJoined(org);
    } catch (failure) {
      if (failure instanceof ApiFailure && FINAL.has(failure.code))
        forgetInvitation();
      throw failure;
    }
  });

  const notNow = () => {
    forgetInvitation();
    navigate('/');
  };

  return (
    <section className="account invitation" aria-labelledby="invitation-title">
      <h1 id="invitation-title">Invitation to an organization</h1>
      {joined ? (
        <>
          <Notice kind="info">
            You joined {joined.name} as {ROLE_NAMES[joined.role].toLowerCase()}.
            It is now your current organization: your chats are billed to its
            credit pool, and Skills shows its Skills.
          </Notice>
          <p className="org-actions">
            <RouteLink to="/organization">{`Open ${joined.name}`}</RouteLink>
            <RouteLink to="/">Start a chat</RouteLink>
          </p>
        </>
      ) : !token ? (
        <Notice kind="error">
          This link has no invitation token. Open the link from the invitation
          mail again.
        </Notice>
      ) : (
        <form className="account-section" onSubmit={onSubmit}>
          <p>
            You were invited to join an organization. Accept it as{' '}
            <strong className="org-member-email">{user.email}</strong>: the
            invitation must have been sent to this address.
          </p>
          {user.emailVerified ? null : (
            <p className="meta">
              Your address is not verified yet: open the link in the
              verification mail we sent you first, then come back here.
            </p>
          )}
          {error ? (
            <InvitationFailure error={error} email={user.email} />
          ) : null}
          <div className="org-actions">
            <button type="submit" disabled={busy}>
              {busy ? 'Accepting…' : 'Accept invitation'}
            </button>
            <button type="button" className="secondary" onClick={notNow}>
              Not now
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

function InvitationFailure({
  error,
  email,
}: {
  error: unknown;
  email: string;
}) {
  const [resent, setResent] = useState<string | null>(null);
  const resend = useFormAction(async () => {
    setResent(unwrap(await api.POST('/v1/auth/resend-verification')).message);
  });
  const code = error instanceof ApiFailure ? error.code : '';
  return (
    <>
      <Notice kind="error">
        {describeFailure(error)}
        {code === 'invitation_mismatch'
          ? ` You are signed in as ${email}: sign out, then sign in with the invited address (the invitation is kept).`
          : ''}
      </Notice>
      {code === 'email_unverified' ? (
        <div className="org-actions">
          <button
            type="button"
            className="secondary"
            disabled={resend.busy}
            onClick={resend.onSubmit}
          >
            {resend.busy ? 'Sending…' : 'Resend the verification mail'}
          </button>
        </div>
      ) : null}
      {resent ? <Notice kind="info">{resent}</Notice> : null}
      {resend.error ? (
        <Notice kind="error">{describeFailure(resend.error)}</Notice>
      ) : null}
      {code === 'already_member' ? (
        <p>
          <RouteLink to="/organization">Open your organizations</RouteLink>
        </p>
      ) : null}
    </>
  );
}
