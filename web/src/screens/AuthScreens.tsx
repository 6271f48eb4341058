import { NEW_PASSWORD_LIMITS } from './NewPasswordInput';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, ApiFailure, describeFailure, unwrap } from '../api/client';
import { landingPath, pendingInvitation } from '../invitation';
import { navigate } from '../navigation';
import { returnPath } from '../return-path';
import { FieldErrors, Notice } from './Notice';
import { useFormAction } from './use-form-action';
import './auth.css';

interface Props {
  onSignedIn: () => Promise<void>;
}

/** What a Google or GitHub sign-in that failed comes back with (`/?error=<code>`), in words. */
const OAUTH_ERRORS: Record<string, string> = {
  oauth_denied: 'The sign-in was cancelled at the provider.',
  oauth_email_unverified:
    'The provider has not verified that email address: verify it there, or sign in with your password.',
  oauth_exchange_failed:
    'The provider did not confirm the sign-in. Please try again.',
  oauth_state_invalid:
    'The sign-in took too long or was started in another tab. Please try again.',
  account_disabled: 'This account is disabled.',
  account_deleted: 'This account was deleted.',
  provider_not_configured:
    'Signing in with that provider is not available here.',
};

function queryParam(name: string): string | null {
  return new URLSearchParams(window.location.search).get(name);
}

export function SignInScreen({ onSignedIn }: Props) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // A Google or GitHub sign-in of an account with two-factor on lands on /?two_factor=required.
  const [secondStep, setSecondStep] = useState(
    () => queryParam('two_factor') === 'required',
  );
  const [oauthError] = useState(() => {
    const code = queryParam('error');
    return code
      ? (OAUTH_ERRORS[code] ??
          'Signing in with the provider failed. Please try again.')
      : null;
  });
  const { error, busy, onSubmit } = useFormAction(async () => {
    try {
      unwrap(await api.POST('/v1/auth/login', { body: { email, password } }));
    } catch (failure) {
      if (
        failure instanceof ApiFailure &&
        failure.code === 'two_factor_required'
      ) {
        setPassword('');
        setSecondStep(true);
        return;
      }
      throw failure;
    }
    await onSignedIn();
    navigate(landingPath());
  });

  if (secondStep) {
    return (
      <SecondFactorStep
        onSignedIn={onSignedIn}
        onRestart={() => {
          setSecondStep(false);
          if (window.location.search)
            window.history.replaceState(null, '', window.location.pathname);
        }}
      />
    );
  }

  return (
    <main className="auth">
      <h1>Sign in</h1>
      <InvitationNotice />
      {oauthError ? <Notice kind="error">{oauthError}</Notice> : null}
      <form onSubmit={onSubmit}>
        <CredentialFields
          email={email}
          password={password}
          onEmail={setEmail}
          onPassword={setPassword}
          newPassword={false}
        />
        {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p className="auth-forgot">
        <RouteLink to="/forgot-password">Forgot password?</RouteLink>
      </p>
      <p className="alternatives">
        <a href="/v1/auth/google">Sign in with Google</a> ·{' '}
        <a href="/v1/auth/github">Sign in with GitHub</a>
      </p>
      <p>
        No account yet? <RouteLink to="/sign-up">Sign up</RouteLink>
      </p>
    </main>
  );
}

/** The second step of a sign-in with two-factor on: the pending cookie is set; a code (or a recovery code) finishes it. */
function SecondFactorStep({
  onSignedIn,
  onRestart,
}: Props & { onRestart: () => void }) {
  const [useRecovery, setUseRecovery] = useState(false);
  const [code, setCode] = useState('');
  const [recoveryCode, setRecoveryCode] = useState('');
  const { error, busy, onSubmit } = useFormAction(async () => {
    const body = useRecovery
      ? { recoveryCode: recoveryCode.trim() }
      : { code: code.replace(/\s+/g, '') };
    unwrap(await api.POST('/v1/auth/2fa/verify', { body }));
    await onSignedIn();
    navigate(landingPath());
  });
  const expired =
    error instanceof ApiFailure &&
    error.code === 'two_factor_challenge_invalid';

  return (
    <main className="auth">
      <h1>Sign in</h1>
      <h2 className="auth-step">Two-factor sign-in</h2>
      <p>
        {useRecovery
          ? 'Enter one of the recovery codes you stored when you turned on two-factor sign-in.'
          : 'Enter the 6-digit code your authenticator app shows.'}
      </p>
      <form onSubmit={onSubmit}>
        {useRecovery ? (
          <label>
            Recovery code
            <input
              name="recoveryCode"
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
              required
              maxLength={64}
              value={recoveryCode}
              onChange={(event) => setRecoveryCode(event.target.value)}
            />
          </label>
        ) : (
          <label>
            Authentication code
            <input
              name="code"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="\s*\d{3}\s*\d{3}\s*"
              title="6 digits"
              required
              maxLength={8}
              value={code}
              onChange={(event) => setCode(event.target.value)}
            />
          </label>
        )}
        {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Verifying…' : 'Verify'}
        </button>
      </form>
      <p>
        <button
          type="button"
          className="link-button"
          onClick={() => setUseRecovery(!useRecovery)}
        >
          {useRecovery ? 'Use an authentication code' : 'Use a recovery code'}
        </button>
      </p>
      <p>
        <button type="button" className="link-button" onClick={onRestart}>
          {expired ? 'Sign in again' : 'Start over'}
        </button>
      </p>
    </main>
  );
}

export function SignUpScreen({ onSignedIn }: Props) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { error, busy, onSubmit } = useFormAction(async () => {
    unwrap(await api.POST('/v1/auth/register', { body: { email, password } }));
    await onSignedIn();
    navigate(landingPath());
  });

  return (
    <main className="auth">
      <h1>Create an account</h1>
      <InvitationNotice />
      <form onSubmit={onSubmit}>
        <CredentialFields
          email={email}
          password={password}
          onEmail={setEmail}
          onPassword={setPassword}
          newPassword
        />
        {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
        <FieldErrors fields={error instanceof ApiFailure ? error.fields : []} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Sign up'}
        </button>
      </form>
      <p>
        Already have an account? <RouteLink to="/sign-in">Sign in</RouteLink>
      </p>
    </main>
  );
}

/** On the way to an invitation: which account accepts it; on the way back to a shared conversation: why. */
function InvitationNotice() {
  if (!pendingInvitation())
    return returnPath()?.startsWith('/shared/') ? (
      <Notice kind="info">
        Sign in, or create an account, to continue the shared conversation: it
        opens again next.
      </Notice>
    ) : null;
  return (
    <Notice kind="info">
      You are invited to an organization. Sign in, or create an account, with
      the address the invitation was sent to: the invitation opens next.
    </Notice>
  );
}

function CredentialFields(props: {
  email: string;
  password: string;
  onEmail: (value: string) => void;
  onPassword: (value: string) => void;
  newPassword: boolean;
}) {
  return (
    <>
      <label>
        Email
        <input
          type="email"
          name="email"
          autoComplete="email"
          required
          value={props.email}
          onChange={(event) => props.onEmail(event.target.value)}
        />
      </label>
      <label>
        Password
        <input
          type="password"
          name="password"
          autoComplete={props.newPassword ? 'new-password' : 'current-password'}
          required
          minLength={
            props.newPassword ? NEW_PASSWORD_LIMITS.minLength : undefined
          }
          maxLength={
            props.newPassword ? NEW_PASSWORD_LIMITS.maxLength : undefined
          }
          value={props.password}
          onChange={(event) => props.onPassword(event.target.value)}
        />
      </label>
    </>
  );
}

/**
 * A link that changes the screen without reloading the page (and still works as a plain link: opened in a
 * new tab with a modifier key or the middle button).
 */
export function RouteLink({ to, children }: { to: string; children: string }) {
  return <Link href={to}>{children}</Link>;
}
