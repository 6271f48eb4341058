import { useCallback, useEffect, useId, useState, type ReactNode } from 'react';
import QRCode from 'qrcode';
import type { ScreenProps } from '../App';
import { api, ApiFailure, describeFailure, unwrap, type Schemas } from '../api/client';
import { navigate } from '../navigation';
import { FieldErrors, Notice } from './Notice';
import { useFormAction } from './use-form-action';
import './account.css';

type SessionItem = Schemas['SessionDto'];
type TwoFactorStatus = Schemas['TwoFactorStatusDto'];

/** The signed-in person's account: email, password, two-factor sign-in, sessions, their data, deletion. */
export function AccountScreen({ user, refreshUser }: ScreenProps) {
  // Bumped when a change ends other sessions (a new password), so the list is read again.
  const [sessionsVersion, setSessionsVersion] = useState(0);
  return (
    <div className="account">
      <h1>Account</h1>
      <EmailSection email={user.email} verified={user.emailVerified} />
      <PasswordSection onChanged={() => setSessionsVersion((version) => version + 1)} />
      <TwoFactorSection enabled={user.twoFactorEnabled} refreshUser={refreshUser} />
      <SessionsSection key={sessionsVersion} />
      <DataSection />
      <DeleteSection refreshUser={refreshUser} />
    </div>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <section className="account-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <>
      <Notice kind="error">{describeFailure(error)}</Notice>
      <FieldErrors fields={error instanceof ApiFailure ? error.fields : []} />
    </>
  );
}

function EmailSection({ email, verified }: { email: string; verified: boolean }) {
  const [sent, setSent] = useState<string | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setSent(unwrap(await api.POST('/v1/auth/resend-verification')).message);
  });
  return (
    <Section title="Email">
      <p className="account-email">
        <span className="account-address">{email}</span>{' '}
        <span className={verified ? 'badge badge-ok' : 'badge badge-warn'}>{verified ? 'Verified' : 'Not verified'}</span>
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

function PasswordSection({ onChanged }: { onChanged: () => void }) {
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [changed, setChanged] = useState(false);
  const hint = useId();
  const { error, busy, onSubmit } = useFormAction(async () => {
    setChanged(false);
    unwrap(await api.POST('/v1/auth/change-password', { body: { currentPassword, newPassword } }));
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
          <input type="password" name="current-password" autoComplete="current-password" required value={currentPassword} onChange={(event) => setCurrentPassword(event.target.value)} />
        </label>
        <label>
          New password
          <input
            type="password"
            name="new-password"
            autoComplete="new-password"
            required
            minLength={12}
            maxLength={128}
            aria-describedby={hint}
            value={newPassword}
            onChange={(event) => setNewPassword(event.target.value)}
          />
        </label>
        <p id={hint} className="hint">
          12 to 128 characters. Your other devices are signed out.
        </p>
        <ErrorNotice error={error} />
        {changed ? <Notice kind="info">Your password was changed. Other devices were signed out.</Notice> : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Changing…' : 'Change password'}
        </button>
      </form>
    </Section>
  );
}

function TwoFactorSection({ enabled, refreshUser }: { enabled: boolean; refreshUser: () => Promise<void> }) {
  const [status, setStatus] = useState<TwoFactorStatus | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const [setup, setSetup] = useState<{ secret: string; qr: string | null } | null>(null);
  const [turnedOff, setTurnedOff] = useState(false);

  const load = useCallback(async () => {
    try {
      setStatus(unwrap(await api.GET('/v1/auth/2fa')));
      setLoadError(null);
    } catch (error) {
      setLoadError(error);
    }
  }, []);
  // Read again when the person's flag changes (another tab, or this section's own change).
  useEffect(() => void load(), [load, enabled]);

  const start = useFormAction(async () => {
    setTurnedOff(false);
    const answer = unwrap(await api.POST('/v1/auth/2fa/setup'));
    let qr: string | null = null;
    try {
      qr = await QRCode.toDataURL(answer.otpauthUri, { margin: 2, width: 240 });
    } catch {
      qr = null;
    }
    setSetup({ secret: answer.secret, qr });
  });

  return (
    <Section title="Two-factor sign-in">
      {loadError ? <ErrorNotice error={loadError} /> : null}
      {recoveryCodes ? (
        <RecoveryCodes codes={recoveryCodes} onDone={() => setRecoveryCodes(null)} />
      ) : status === null ? (
        loadError ? null : <p role="status">Loading…</p>
      ) : status.enabled ? (
        <DisableTwoFactor
          status={status}
          onDisabled={async () => {
            setTurnedOff(true);
            await refreshUser();
            await load();
          }}
        />
      ) : setup ? (
        <EnableTwoFactor
          setup={setup}
          onCancel={() => setSetup(null)}
          onEnabled={async (codes) => {
            setSetup(null);
            setRecoveryCodes(codes);
            await refreshUser();
            await load();
          }}
        />
      ) : (
        <form onSubmit={start.onSubmit} className="account-form">
          {turnedOff ? <Notice kind="info">Two-factor sign-in is off.</Notice> : null}
          <p>
            <span className="badge badge-warn">Off</span> Sign-in asks only for your password. Turn on two-factor sign-in to also ask for a code from an authenticator app.
          </p>
          <ErrorNotice error={start.error} />
          <button type="submit" disabled={start.busy}>
            {start.busy ? 'Starting…' : 'Set up two-factor sign-in'}
          </button>
        </form>
      )}
    </Section>
  );
}

function EnableTwoFactor({ setup, onEnabled, onCancel }: { setup: { secret: string; qr: string | null }; onEnabled: (codes: string[]) => Promise<void>; onCancel: () => void }) {
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [askPassword, setAskPassword] = useState(false);
  const { error, busy, onSubmit } = useFormAction(async () => {
    try {
      const answer = unwrap(await api.POST('/v1/auth/2fa/enable', { body: { code: code.replace(/\s+/g, ''), ...(askPassword && password ? { password } : {}) } }));
      await onEnabled(answer.recoveryCodes);
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.code === 'password_incorrect' && !askPassword) {
        // The session signed in more than 10 minutes ago: the API wants the password too.
        setAskPassword(true);
        throw new ApiFailure(403, failure.code, 'You signed in a while ago: enter your password too, then turn it on.');
      }
      throw failure;
    }
  });
  const secretHint = useId();
  return (
    <form onSubmit={onSubmit} className="account-form">
      <ol className="account-steps">
        <li>Scan this QR code with your authenticator app, or type the secret key into it.</li>
        <li>Enter the 6-digit code the app shows.</li>
      </ol>
      {setup.qr ? <img className="account-qr" src={setup.qr} alt="QR code for your authenticator app" width={240} height={240} /> : null}
      <label>
        Secret key
        <input className="account-secret" readOnly value={setup.secret} aria-describedby={secretHint} onFocus={(event) => event.target.select()} spellCheck={false} />
      </label>
      <p id={secretHint} className="hint">
        Time-based, 6 digits, every 30 seconds.
      </p>
      <label>
        Authentication code
        <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="\s*\d{3}\s*\d{3}\s*" title="6 digits" required maxLength={8} value={code} onChange={(event) => setCode(event.target.value)} />
      </label>
      {askPassword ? (
        <label>
          Password
          <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
      ) : null}
      <ErrorNotice error={error} />
      <div className="account-actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Turning on…' : 'Turn on two-factor sign-in'}
        </button>
        <button type="button" className="secondary" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const heading = useId();
  return (
    <div className="account-recovery" role="group" aria-labelledby={heading}>
      <Notice kind="info">Two-factor sign-in is on.</Notice>
      <h3 id={heading}>Recovery codes</h3>
      <p>
        Store these codes somewhere safe (a password manager, or printed). Each one signs you in once if you lose your authenticator. <strong>They are shown only now.</strong>
      </p>
      <ul className="account-codes" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <button type="button" onClick={onDone}>
        I stored my recovery codes
      </button>
    </div>
  );
}

function DisableTwoFactor({ status, onDisabled }: { status: TwoFactorStatus; onDisabled: () => Promise<void> }) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const { error, busy, onSubmit } = useFormAction(async () => {
    const value = code.trim();
    const factor = /^\d{3}\s*\d{3}$/.test(value) ? { code: value.replace(/\s+/g, '') } : { recoveryCode: value };
    unwrap(await api.POST('/v1/auth/2fa/disable', { body: { ...factor, ...(password ? { password } : {}) } }));
    await onDisabled();
  });
  return (
    <form onSubmit={onSubmit} className="account-form">
      <p>
        <span className="badge badge-ok">On</span> Sign-in asks for a code from your authenticator app. {status.recoveryCodesLeft} recovery{' '}
        {status.recoveryCodesLeft === 1 ? 'code' : 'codes'} left.
      </p>
      <p>To turn it off, confirm with your password and a current code (or a recovery code).</p>
      <label>
        Password
        <input type="password" name="password" autoComplete="current-password" value={password} onChange={(event) => setPassword(event.target.value)} />
      </label>
      <label>
        Authentication or recovery code
        <input name="code" autoComplete="one-time-code" autoCapitalize="none" spellCheck={false} required maxLength={64} value={code} onChange={(event) => setCode(event.target.value)} />
      </label>
      <ErrorNotice error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Turning off…' : 'Turn off two-factor sign-in'}
      </button>
    </form>
  );
}

function formatTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A short name for a user agent ("Chrome on Linux"), the raw string kept for the title. */
function deviceName(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : null;
  const system = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X/.test(userAgent)
          ? 'macOS'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : null;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? userAgent.slice(0, 60);
}

function SessionsSection() {
  const [sessions, setSessions] = useState<SessionItem[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [ending, setEnding] = useState<string | null>(null);
  const [ended, setEnded] = useState(false);

  const load = useCallback(async () => {
    try {
      setSessions(unwrap(await api.GET('/v1/auth/sessions')).items);
    } catch (failure) {
      setError(failure);
    }
  }, []);
  useEffect(() => void load(), [load]);

  const end = async (id: string) => {
    setEnding(id);
    setError(null);
    setEnded(false);
    try {
      unwrap(await api.DELETE('/v1/auth/sessions/{id}', { params: { path: { id } } }));
      // The list without it, then the notice: what is announced matches what is shown.
      setSessions((current) => current?.filter((session) => session.id !== id) ?? current);
      await load();
      setEnded(true);
    } catch (failure) {
      setError(failure);
    } finally {
      setEnding(null);
    }
  };

  return (
    <Section title="Sessions">
      <p>The devices signed in to your account.</p>
      <ErrorNotice error={error} />
      {ended ? <Notice kind="info">The session was ended.</Notice> : null}
      {sessions === null ? (
        error ? null : <p role="status">Loading…</p>
      ) : (
        <ul className="account-sessions">
          {sessions.map((session) => {
            const name = deviceName(session.userAgent);
            return (
              <li key={session.id} className={session.current ? 'current' : undefined}>
                <div className="account-session-head">
                  <strong title={session.userAgent ?? undefined}>{name}</strong>
                  {session.current ? <span className="badge badge-ok">This device</span> : null}
                </div>
                <dl>
                  <dt>Signed in</dt>
                  <dd>{formatTime(session.createdAt)}</dd>
                  <dt>Last seen</dt>
                  <dd>{formatTime(session.lastSeenAt)}</dd>
                  <dt>IP address</dt>
                  <dd>{session.ip ?? 'Unknown'}</dd>
                  <dt>Browser</dt>
                  <dd className="account-agent">{session.userAgent ?? 'Unknown'}</dd>
                </dl>
                {session.current ? null : (
                  <button type="button" className="secondary" disabled={ending !== null} aria-label={`End session: ${name}, signed in ${formatTime(session.createdAt)}`} onClick={() => void end(session.id)}>
                    {ending === session.id ? 'Ending…' : 'End'}
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </Section>
  );
}

function DataSection() {
  return (
    <Section title="Your data">
      <p>A JSON file with your account, conversations, files and Skills as this service stores them.</p>
      <p>
        <a className="account-download" href="/v1/auth/me/export" download="account-export.json">
          Download your data
        </a>
      </p>
    </Section>
  );
}

function DeleteSection({ refreshUser }: { refreshUser: () => Promise<void> }) {
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const hint = useId();
  const { error, busy, onSubmit } = useFormAction(async () => {
    if (confirm !== 'DELETE') throw new ApiFailure(400, 'confirm', 'Type DELETE to confirm.');
    unwrap(await api.DELETE('/v1/auth/me', { body: { confirm: 'DELETE', ...(password ? { password } : {}) } }));
    await refreshUser();
    navigate('/sign-in');
  });
  return (
    <Section title="Delete account">
      <form onSubmit={onSubmit} className="account-form account-danger">
        <p>This erases your account, conversations, files and Skills. It cannot be undone.</p>
        <label>
          Password
          <input type="password" name="password" autoComplete="current-password" aria-describedby={hint} value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
        <p id={hint} className="hint">
          Leave empty only if you sign in with Google or GitHub and have no password (then sign in again first).
        </p>
        <label>
          Type DELETE to confirm
          <input name="confirm" autoComplete="off" autoCapitalize="characters" spellCheck={false} required value={confirm} onChange={(event) => setConfirm(event.target.value)} />
        </label>
        <ErrorNotice error={error} />
        <button type="submit" className="danger" disabled={busy || confirm !== 'DELETE'}>
          {busy ? 'Deleting…' : 'Delete account'}
        </button>
      </form>
    </Section>
  );
}
