import { NewPasswordInput } from '../NewPasswordInput';
import { useId, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { Notice } from '../Notice';
import { useFormAction } from '../use-form-action';
import { ErrorNotice, Section } from './section';

export function PasswordSection({ onChanged }: { onChanged: () => void }) {
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [changed, setChanged] = useState(false);
  const hint = useId();
  const { error, busy, onSubmit } = useFormAction(async () => {
    setChanged(false);
    unwrap(
      await api.POST('/v1/auth/change-password', {
        body: { currentPassword, newPassword },
      }),
    );
    setCurrentPassword('');
    setNewPassword('');
    setChanged(true);
    onChanged();
  });
  return (
    <Section title="Password">
      <form onSubmit={onSubmit} className="account-form">
        <label>
          Current password
          <input
            type="password"
            name="current-password"
            autoComplete="current-password"
            required
            value={currentPassword}
            onChange={(event) => setCurrentPassword(event.target.value)}
          />
        </label>
        <NewPasswordInput
          label="New password"
          name="new-password"
          value={newPassword}
          onChange={setNewPassword}
          hintId={hint}
        />
        <p id={hint} className="hint">
          12 to 128 characters. Your other devices are signed out.
        </p>
        <ErrorNotice error={error} />
        {changed ? (
          <Notice kind="info">
            Your password was changed. Other devices were signed out.
          </Notice>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Changing…' : 'Change password'}
        </button>
      </form>
    </Section>
  );
}
