import { useCallback, useEffect, useState } from 'react';
import { api, ApiFailure, unwrap, type User } from './api/client';
import { INVITATION_PATH, pendingInvitation } from './invitation';
import { navigate, usePath } from './navigation';
import { OrgProvider } from './org-context';
import { AcceptInvitationScreen } from './screens/AcceptInvitationScreen';
import { AccountScreen } from './screens/AccountScreen';
import { RouteLink, SignInScreen, SignUpScreen } from './screens/AuthScreens';
import { ChatScreen } from './screens/ChatScreen';
import { ConversationsScreen } from './screens/ConversationsScreen';
import { FilesScreen } from './screens/FilesScreen';
import { OrganizationScreen } from './screens/OrganizationScreen';
import { OrgSwitcher } from './screens/orgs/OrgSwitcher';
import {
  ForgotPasswordScreen,
  ResetPasswordScreen,
  VerifyEmailScreen,
} from './screens/PasswordScreens';
import { PlansScreen, QuotaBadge } from './screens/PlansScreen';
import {
  SharedConversationScreen,
  sharedIdOf,
} from './screens/SharedConversationScreen';
import { SkillsScreen } from './screens/SkillsScreen';
import { returnPath } from './return-path';

/** The signed-in person, or null; undefined while the first GET /v1/auth/me is on its way. */
export type Session = User | null | undefined;

/** What every signed-in screen gets: the person, and a way to re-read them after a change (plan, email, 2FA). */
export interface ScreenProps {
  user: User;
  refreshUser: () => Promise<void>;
}

const SECTIONS: { path: string; label: string }[] = [
  { path: '/', label: 'Chat' },
  { path: '/conversations', label: 'Conversations' },
  { path: '/files', label: 'Files' },
  { path: '/skills', label: 'Skills' },
  { path: '/organization', label: 'Organization' },
  { path: '/plans', label: 'Plans' },
  { path: '/account', label: 'Account' },
];

export function App() {
  const path = usePath();
  const [user, setUser] = useState<Session>(undefined);
  // Why the last GET /v1/auth/me failed, when it was not a 401: the service or the network is down.
  const [unreachable, setUnreachable] = useState<string | null>(null);

  // Only a 401 means signed out; a 5xx or a network failure says nothing about the session, so the
  // person stays as they were (signed in, or still loading) and is told the service did not answer.
  // State is set once the answer is there, never synchronously in the effect that asks.
  const refreshUser = useCallback(
    () =>
      api
        .GET('/v1/auth/me')
        .then((result) => {
          setUser(unwrap(result));
          setUnreachable(null);
        })
        .catch((error: unknown) => {
          if (error instanceof ApiFailure && error.status === 401) {
            setUser(null);
            setUnreachable(null);
          } else setUnreachable(unreachableReason(error));
        }),
    [],
  );
  useEffect(() => void refreshUser(), [refreshUser]);
  // Google and GitHub sign-ins come back to the root: a shared conversation waiting to be continued
  // (return-path.ts) is where the person was going.
  useEffect(() => {
    const back = user && path === '/' ? returnPath() : null;
    if (back) navigate(back);
  }, [user, path]);

  const signOut = async () => {
    await api.POST('/v1/auth/logout');
    setUser(null);
    navigate('/sign-in');
  };

  if (user === undefined && unreachable)
    return (
      <div className="loading" role="alert">
        <p className="notice notice-error">
          {unreachable} Try again in a moment.
        </p>
        <button type="button" onClick={() => void refreshUser()}>
          Try again
        </button>
      </div>
    );
  if (user === undefined)
    return (
      <p className="loading" role="status">
        Loading…
      </p>
    );
  // Reachable signed in or not: the links in mails land here.
  if (path === '/reset-password') return <ResetPasswordScreen />;
  if (path === '/verify-email')
    return <VerifyEmailScreen onVerified={refreshUser} />;
  // An invitation link opened signed out: sign in (or up) first; its token is kept (invitation.ts).
  if (user === null) {
    // A shared conversation is public: read signed out, without the app's shell.
    const shareId = sharedIdOf(path);
    if (shareId)
      return (
        <SharedConversationScreen
          key={shareId}
          shareId={shareId}
          signedIn={false}
        />
      );
    if (path === '/sign-up') return <SignUpScreen onSignedIn={refreshUser} />;
    if (path === '/forgot-password') return <ForgotPasswordScreen />;
    return <SignInScreen onSignedIn={refreshUser} />;
  }
  const props: ScreenProps = { user, refreshUser };
  return (
    <OrgProvider key={user.id} userId={user.id}>
      <div className="shell">
        <a className="skip-link" href="#content">
          Skip to content
        </a>
        <header className="topbar">
          <nav aria-label="Main" className="sections">
            {SECTIONS.map((section) => (
              <span
                key={section.path}
                aria-current={isIn(path, section.path) ? 'page' : undefined}
              >
                <RouteLink to={section.path}>{section.label}</RouteLink>
              </span>
            ))}
          </nav>
          <div className="account-bar">
            <OrgSwitcher />
            <QuotaBadge user={user} />
            <span className="who">{user.email}</span>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </header>
        {unreachable && (
          <p className="notice notice-error" role="alert">
            {unreachable} You are still signed in.
          </p>
        )}
        {pendingInvitation() && path !== INVITATION_PATH ? (
          <p className="notice notice-info invitation-banner" role="status">
            An invitation to an organization is waiting for you.{' '}
            <RouteLink to={INVITATION_PATH}>Open the invitation</RouteLink>
          </p>
        ) : null}
        <main id="content">{screenFor(path, props)}</main>
      </div>
    </OrgProvider>
  );
}

function unreachableReason(error: unknown): string {
  const detail =
    error instanceof ApiFailure
      ? `it answered ${error.status}`
      : 'the network failed';
  return `The service could not be reached (${detail}).`;
}

function isIn(path: string, section: string): boolean {
  return section === '/'
    ? path === '/' || path.startsWith('/chat')
    : path === section || path.startsWith(`${section}/`);
}

function screenFor(path: string, props: ScreenProps) {
  const shareId = sharedIdOf(path);
  if (shareId)
    return (
      <SharedConversationScreen key={shareId} shareId={shareId} signedIn />
    );
  if (path.startsWith('/conversations'))
    return <ConversationsScreen {...props} />;
  if (path.startsWith('/files')) return <FilesScreen />;
  if (path.startsWith('/skills')) return <SkillsScreen {...props} />;
  if (path.startsWith('/organization'))
    return <OrganizationScreen {...props} />;
  if (path === INVITATION_PATH) return <AcceptInvitationScreen {...props} />;
  if (path.startsWith('/plans')) return <PlansScreen {...props} />;
  if (path.startsWith('/account')) return <AccountScreen {...props} />;
  return <ChatScreen {...props} />;
}
