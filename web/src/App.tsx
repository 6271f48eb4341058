import { useEffect, type ReactNode } from 'react';
import { Route, Switch, useLocation, useRoute } from 'wouter';
import { api, ApiFailure } from './api/client';
import { INVITATION_PATH, pendingInvitation } from './invitation';
import { navigate } from './navigation';
import { OrgProvider } from './org-context';
import { returnPath } from './return-path';
import { AcceptInvitationScreen } from './screens/AcceptInvitationScreen';
import { AccountScreen } from './screens/AccountScreen';
import { RouteLink, SignInScreen, SignUpScreen } from './screens/AuthScreens';
import { ChatScreen } from './screens/ChatScreen';
import { ConversationSidebar } from './screens/chat/ConversationSidebar';
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
import { SharedConversationScreen } from './screens/SharedConversationScreen';
import { SkillsScreen } from './screens/SkillsScreen';
import { ThemeToggle } from './screens/ThemeToggle';
import { useSession, type ScreenProps } from './session';

const SECTIONS: { path: string; label: string }[] = [
  { path: '/', label: 'Chat' },
  { path: '/conversations', label: 'Conversations' },
  { path: '/files', label: 'Files' },
  { path: '/skills', label: 'Skills' },
  { path: '/organization', label: 'Organization' },
  { path: '/plans', label: 'Plans' },
  { path: '/account', label: 'Account' },
];

/** A shared conversation (public: read signed out too). */
const SHARED = '/shared/:shareId';

export function App() {
  const [path] = useLocation();
  const { user, failure, refresh, signedOut } = useSession();
  // Why the last GET /v1/auth/me failed, when it was not a 401: the service or the network is down.
  const unreachable = failure ? unreachableReason(failure) : null;

  // Google and GitHub sign-ins come back to the root: a shared conversation waiting to be continued
  // (return-path.ts) is where the person was going.
  useEffect(() => {
    const back = user && path === '/' ? returnPath() : null;
    if (back) navigate(back);
  }, [user, path]);

  const signOut = async () => {
    await api.POST('/v1/auth/logout');
    signedOut();
    navigate('/sign-in');
  };

  if (user === undefined && unreachable)
    return (
      <div className="loading" role="alert">
        <p className="notice notice-error">
          {unreachable} Try again in a moment.
        </p>
        <button type="button" onClick={() => void refresh()}>
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
  return (
    <Switch>
      {/* Reachable signed in or not: the links in mails land here. */}
      <Route path="/reset-password">
        <ResetPasswordScreen />
      </Route>
      <Route path="/verify-email">
        <VerifyEmailScreen onVerified={refresh} />
      </Route>
      <Route>
        {user === null ? (
          // An invitation link opened signed out: sign in (or up) first; its token is kept (invitation.ts).
          <Switch>
            {/* A shared conversation is public: read signed out, without the app's shell. */}
            <Route path={SHARED}>
              {({ shareId }) => (
                <SharedConversationScreen
                  key={shareId}
                  shareId={shareId}
                  signedIn={false}
                />
              )}
            </Route>
            <Route path="/sign-up">
              <SignUpScreen onSignedIn={refresh} />
            </Route>
            <Route path="/forgot-password">
              <ForgotPasswordScreen />
            </Route>
            <Route>
              <SignInScreen onSignedIn={refresh} />
            </Route>
          </Switch>
        ) : (
          <OrgProvider key={user.id} userId={user.id}>
            <Shell
              props={{ user, refreshUser: refresh }}
              path={path}
              unreachable={unreachable}
              onSignOut={() => void signOut()}
            />
          </OrgProvider>
        )}
      </Route>
    </Switch>
  );
}

function Shell({
  props,
  path,
  unreachable,
  onSignOut,
}: {
  props: ScreenProps;
  path: string;
  unreachable: string | null;
  onSignOut: () => void;
}) {
  return (
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
          <QuotaBadge user={props.user} />
          <span className="who">{props.user.email}</span>
          <ThemeToggle />
          <button type="button" onClick={onSignOut}>
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
      <Switch>
        <Route path={SHARED}>
          {({ shareId }) => (
            <Content>
              <SharedConversationScreen
                key={shareId}
                shareId={shareId}
                signedIn
              />
            </Content>
          )}
        </Route>
        <Route path="/conversations">
          <Content>
            <ConversationsScreen />
          </Content>
        </Route>
        <Route path="/files/*?">
          <Content>
            <FilesScreen />
          </Content>
        </Route>
        <Route path="/skills/*?">
          <Content>
            <SkillsScreen {...props} />
          </Content>
        </Route>
        <Route path="/organization/*?">
          <Content>
            <OrganizationScreen {...props} />
          </Content>
        </Route>
        <Route path={INVITATION_PATH}>
          <Content>
            <AcceptInvitationScreen {...props} />
          </Content>
        </Route>
        <Route path="/plans/*?">
          <Content>
            <PlansScreen {...props} />
          </Content>
        </Route>
        <Route path="/account/*?">
          <Content>
            <AccountScreen {...props} />
          </Content>
        </Route>
        {/* The chat: /, /conversations/{id}, and the payment providers' /billing/… returns. One element for
            all of them, so that a new conversation moving to its own address is not drawn again. */}
        <Route>
          <ChatLayout {...props} />
        </Route>
      </Switch>
    </div>
  );
}

function Content({ children }: { children: ReactNode }) {
  return <main id="content">{children}</main>;
}

/** The conversation list beside the chat (folded away on a phone). */
function ChatLayout(props: ScreenProps) {
  const [, params] = useRoute('/conversations/:id');
  return (
    <div className="workspace">
      <ConversationSidebar currentId={params?.id} />
      <main id="content" className="chat-main">
        <ChatScreen {...props} />
      </main>
    </div>
  );
}

function unreachableReason(error: unknown): string {
  const detail =
    error instanceof ApiFailure
      ? `it answered ${error.status}`
      : 'the network failed';
  return `The service could not be reached (${detail}).`;
}

/** Whether `path` is in the main navigation's `section`: a conversation (/conversations/{id}) is the chat's. */
function isIn(path: string, section: string): boolean {
  const conversation = /^\/conversations\/[^/]+\/?$/.test(path);
  if (section === '/')
    return (
      path === '/' ||
      path.startsWith('/chat') ||
      path.startsWith('/billing/') ||
      conversation
    );
  return !conversation && (path === section || path.startsWith(`${section}/`));
}
