import { useState } from 'react';
import { api, ApiFailure, describeFailure, unwrap } from '../api/client';
import { navigate } from '../navigation';
import { FieldErrors, Notice } from './Notice';
import { useFormAction } from './use-form-action';

interface Props {
  onSignedIn: () => Promise<void>;
}

export function SignInScreen({ onSignedIn }: Props) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { error, busy, onSubmit } = useFormAction(async () => {
    unwrap(await api.POST('/v1/auth/login', { body: { email, password } }));
    await onSignedIn();
    navigate('/');
  });

  return (
    <main className="auth">
      <h1>Sign in</h1>
      <form onSubmit={onSubmit}>
        <CredentialFields email={email} password={password} onEmail={setEmail} onPassword={setPassword} newPassword={false} />
        {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p className="alternatives">
        <a href="/v1/auth/google">Sign in with Google</a> · <a href="/v1/auth/github">Sign in with GitHub</a>
      </p>
      <p>
        No account yet? <RouteLink to="/sign-up">Sign up</RouteLink>
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
    navigate('/');
  });

  return (
    <main className="auth">
      <h1>Create an account</h1>
      <form onSubmit={onSubmit}>
        <CredentialFields email={email} password={password} onEmail={setEmail} onPassword={setPassword} newPassword />
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

function CredentialFields(props: { email: string; password: string; onEmail: (value: string) => void; onPassword: (value: string) => void; newPassword: boolean }) {
  return (
    <>
      <label>
        Email
        <input type="email" name="email" autoComplete="email" required value={props.email} onChange={(event) => props.onEmail(event.target.value)} />
      </label>
      <label>
        Password
        <input
          type="password"
          name="password"
          autoComplete={props.newPassword ? 'new-password' : 'current-password'}
          required
          minLength={props.newPassword ? 8 : undefined}
          value={props.password}
          onChange={(event) => props.onPassword(event.target.value)}
        />
      </label>
    </>
  );
}

/** A link that changes the screen without reloading the page (and still works as a plain link). */
export function RouteLink({ to, children }: { to: string; children: string }) {
  return (
    <a href={to} onClick={(event) => (event.preventDefault(), navigate(to))}>
      {children}
    </a>
  );
}
