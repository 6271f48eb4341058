import { NewPasswordInput } from './NewPasswordInput';
import { useEffect, useState } from 'react';
import { api, ApiFailure, describeFailure, unwrap } from '../api/client';
import { landingPath } from '../invitation';
import { RouteLink } from './AuthScreens';
import { FieldErrors, Notice } from './Notice';
import { useFormAction } from './use-form-action';
import './auth.css';

function tokenFromUrl(): string {
  return new URLSearchParams(window.location.search).get('token') ?? '';
}

/** Asks for a reset link; the answer is the same whether or not the account exists. */
export function ForgotPasswordScreen() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    unwrap(await api.POST('/v1/auth/forgot-password', { body: { email } }));
    setSent(email);
  });

  return (
    <main className="auth">
      <h1>Forgot your password?</h1>
      {sent ? (
        <Notice kind="info">
          If an account exists for {sent}, we sent it a link to choose a new
          password. The link works for a limited time.
        </Notice>
      ) : (
        <>
          <p>
            Enter the email address of your account and we will send you a link
            to choose a new password.
          </p>
          <form onSubmit={onSubmit}>
            <label>
              Email
              <input
                type="email"
                name="email"
                autoComplete="email"
                required
                value={email}
                onChange={(event) => setEmail(event.target.value)}
              />
            </label>
            {error ? (
              <Notice kind="error">{describeFailure(error)}</Notice>
            ) : null}
            <FieldErrors
              fields={error instanceof ApiFailure ? error.fields : []}
            />
            <button type="submit" disabled={busy}>
              {busy ? 'Sending…' : 'Send reset link'}
            </button>
          </form>
        </>
      )}
      <p>
        <RouteLink to="/sign-in">Back to sign in</RouteLink>
      </p>
    </main>
  );
}

/** The page of the mailed reset link: /reset-password?token=… */
export function ResetPasswordScreen() {
  const [token] = useState(tokenFromUrl);
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const { error, busy, onSubmit } = useFormAction(async () => {
    unwrap(
      await api.POST('/v1/auth/reset-password', { body: { token, password } }),
    );
    setDone(true);
  });

  return (
    <main className="auth">
      <h1>Choose a new password</h1>
      {done ? (
        <div className="auth-result">
          <Notice kind="info">
            Your password was changed. Sign in with your new password.
          </Notice>
          <p>
            <RouteLink to="/sign-in">Sign in</RouteLink>
          </p>
        </div>
      ) : !token ? (
        <div className="auth-result">
          <Notice kind="error">
            This link has no reset token. Open the link from the email again, or
            ask for a new one.
          </Notice>
          <p>
            <RouteLink to="/forgot-password">Ask for a new link</RouteLink>
          </p>
        </div>
      ) : (
        <form onSubmit={onSubmit}>
          <NewPasswordInput
            label="New password"
            name="new-password"
            value={password}
            onChange={setPassword}
            hintId="reset-password-hint"
          />
          <p id="reset-password-hint" className="hint">
            12 to 128 characters.
          </p>
          {error ? (
            <Notice kind="error">{describeFailure(error)}</Notice>
          ) : null}
          <FieldErrors
            fields={error instanceof ApiFailure ? error.fields : []}
          />
          {error instanceof ApiFailure &&
          error.code === 'invalid_reset_token' ? (
            <p>
              <RouteLink to="/forgot-password">Ask for a new link</RouteLink>
            </p>
          ) : null}
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Set new password'}
          </button>
        </form>
      )}
    </main>
  );
}

/** One POST per token, even when React runs the effect twice (StrictMode): a token works once. */
const verifications = new Map<string, Promise<void>>();

function verifyOnce(token: string): Promise<void> {
  let pending = verifications.get(token);
  if (!pending) {
    pending = api
      .POST('/v1/auth/verify-email', { body: { token } })
      .then((result) => void unwrap(result));
    verifications.set(token, pending);
  }
  return pending;
}

/** The page of the mailed verification link: /verify-email?token=… (verifies on load). */
export function VerifyEmailScreen({
  onVerified,
}: {
  onVerified: () => Promise<void>;
}) {
  const [token] = useState(tokenFromUrl);
  const [outcome, setOutcome] = useState<
    | { state: 'working' }
    | { state: 'verified' }
    | { state: 'failed'; error: unknown }
  >(() =>
    token
      ? { state: 'working' }
      : {
          state: 'failed',
          error: new ApiFailure(
            400,
            'invalid_verification_token',
            'This link has no verification token. Open the link from the email again.',
          ),
        },
  );

  useEffect(() => {
    if (!token) return;
    let live = true;
    verifyOnce(token).then(
      async () => {
        await onVerified();
        if (live) setOutcome({ state: 'verified' });
      },
      (error: unknown) => {
        if (live) setOutcome({ state: 'failed', error });
      },
    );
    return () => {
      live = false;
    };
  }, [token, onVerified]);

  return (
    <main className="auth">
      <h1>Verify your email</h1>
      {outcome.state === 'working' ? (
        <p role="status">Verifying your email address…</p>
      ) : outcome.state === 'verified' ? (
        <Notice kind="info">Your email address is verified.</Notice>
      ) : (
        <Notice kind="error">
          {describeFailure(outcome.error)} You can ask for a new link on your
          account page.
        </Notice>
      )}
      <p>
        <RouteLink to={landingPath()}>Continue to the app</RouteLink>
      </p>
    </main>
  );
}
