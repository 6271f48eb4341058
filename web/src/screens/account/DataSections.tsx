import { useId, useState } from 'react';
import { api, ApiFailure, unwrap } from '../../api/client';
import { navigate } from '../../navigation';
import { useFormAction } from '../use-form-action';
import { ErrorNotice, Section } from './section';

export function DataSection() {
  return (
    <Section title="Your data">
      <p>
        A JSON file with your account, conversations, files and Skills as this
        service stores them.
      </p>
      <p>
        <a
          className="account-download"
          href="/v1/auth/me/export"
          download="account-export.json"
        >
          Download your data
        </a>
      </p>
    </Section>
  );
}

export function DeleteSection({
  refreshUser,
}: {
  refreshUser: () => Promise<void>;
}) {
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const hint = useId();
  const { error, busy, onSubmit } = useFormAction(async () => {
    if (confirm !== 'DELETE')
      throw new ApiFailure(400, 'confirm', 'Type DELETE to confirm.');
    unwrap(
      await api.DELETE('/v1/auth/me', {
        body: { confirm: 'DELETE', ...(password ? { password } : {}) },
      }),
    );
    await refreshUser();
    navigate('/sign-in');
  });
  return (
    <Section title="Delete account">
      <form onSubmit={onSubmit} className="account-form account-danger">
        <p>
          This erases your account, conversations, files and Skills. It cannot
          be undone.
        </p>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            aria-describedby={hint}
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
        <p id={hint} className="hint">
          Leave empty only if you sign in with Google or GitHub and have no
          password (then sign in again first).
        </p>
        <label>
          Type DELETE to confirm
          <input
            name="confirm"
            autoComplete="off"
            autoCapitalize="characters"
            spellCheck={false}
            required
            value={confirm}
            onChange={(event) => setConfirm(event.target.value)}
          />
        </label>
        <ErrorNotice error={error} />
        <button
          type="submit"
          className="danger"
          disabled={busy || confirm !== 'DELETE'}
        >
          {busy ? 'Deleting…' : 'Delete account'}
        </button>
      </form>
    </Section>
  );
}
