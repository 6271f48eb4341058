import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { Notice } from '../Notice';
import { useFormAction } from '../use-form-action';
import { ErrorNotice, Section } from './section';

export function EmailSection({
  email,
  verified,
}: {
  email: string;
  verified: boolean;
}) {
  const [sent, setSent] = useState<string | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setSent(unwrap(await api.POST('/v1/auth/resend-verification')).message);
  });
  return (
    <Section title="Email">
      <p className="account-email">
        <span className="account-address">{email}</span>{' '}
        <span className={verified ? 'badge badge-ok' : 'badge badge-warn'}>
          {verified ? 'Verified' : 'Not verified'}
        </span>
      </p>
      {verified ? null : (
        <form onSubmit={onSubmit} className="account-inline">
          <p>Open the link we mailed you to verify this address. No mail?</p>
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Resend verification email'}
          </button>
        </form>
      )}
      {sent ? <Notice kind="info">{sent}</Notice> : null}
      <ErrorNotice error={error} />
    </Section>
  );
}
