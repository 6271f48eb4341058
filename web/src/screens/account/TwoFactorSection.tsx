import { useCallback, useEffect, useId, useState } from 'react';
import QRCode from 'qrcode';
import { api, ApiFailure, unwrap, type Schemas } from '../../api/client';
import { Notice } from '../Notice';
import { useFormAction } from '../use-form-action';
import { ErrorNotice, Section } from './section';

type TwoFactorStatus = Schemas['TwoFactorStatusDto'];

export function TwoFactorSection({
  enabled,
  refreshUser,
}: {
  enabled: boolean;
  refreshUser: () => Promise<void>;
}) {
  const [status, setStatus] = useState<TwoFactorStatus | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const [setup, setSetup] = useState<{
    secret: string;
    qr: string | null;
  } | null>(null);
  const [turnedOff, setTurnedOff] = useState(false);

  const load = useCallback(
    () =>
      api
        .GET('/v1/auth/2fa')
        .then((result) => {
          setStatus(unwrap(result));
          setLoadError(null);
        })
        .catch(setLoadError),
    [],
  );
  // Read again when the person's flag changes (another tab, or this section's own change).
  useEffect(() => void load(), [load, enabled]);

  const start = useFormAction(async () => {
    setTurnedOff(false);
    const answer = unwrap(await api.POST('/v1/auth/2fa/setup'));
    let qr: string | null;
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
        <RecoveryCodes
          codes={recoveryCodes}
          onDone={() => setRecoveryCodes(null)}
        />
      ) : status === null ? (
        loadError ? null : (
          <p role="status">Loading…</p>
        )
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
          {turnedOff ? (
            <Notice kind="info">Two-factor sign-in is off.</Notice>
          ) : null}
          <p>
            <span className="badge badge-warn">Off</span> Sign-in asks only for
            your password. Turn on two-factor sign-in to also ask for a code
            from an authenticator app.
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

function EnableTwoFactor({
  setup,
  onEnabled,
  onCancel,
}: {
  setup: { secret: string; qr: string | null };
  onEnabled: (codes: string[]) => Promise<void>;
  onCancel: () => void;
}) {
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [askPassword, setAskPassword] = useState(false);
  const { error, busy, onSubmit } = useFormAction(async () => {
    try {
      const answer = unwrap(
        await api.POST('/v1/auth/2fa/enable', {
          body: {
            code: code.replace(/\s+/g, ''),
            ...(askPassword && password ? { password } : {}),
          },
        }),
      );
      await onEnabled(answer.recoveryCodes);
    } catch (failure) {
      if (
        failure instanceof ApiFailure &&
        failure.code === 'password_incorrect' &&
        !askPassword
      ) {
        // The session signed in more than 10 minutes ago: the API wants the password too.
        setAskPassword(true);
        throw new ApiFailure(
          403,
          failure.code,
          'You signed in a while ago: enter your password too, then turn it on.',
        );
      }
      throw failure;
    }
  });
  const secretHint = useId();
  return (
    <form onSubmit={onSubmit} className="account-form">
      <ol className="account-steps">
        <li>
          Scan this QR code with your authenticator app, or type the secret key
          into it.
        </li>
        <li>Enter the 6-digit code the app shows.</li>
      </ol>
      {setup.qr ? (
        <img
          className="account-qr"
          src={setup.qr}
          alt="QR code for your authenticator app"
          width={240}
          height={240}
        />
      ) : null}
      <label>
        Secret key
        <input
          className="account-secret"
          readOnly
          value={setup.secret}
          aria-describedby={secretHint}
          onFocus={(event) => event.target.select()}
          spellCheck={false}
        />
      </label>
      <p id={secretHint} className="hint">
        Time-based, 6 digits, every 30 seconds.
      </p>
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
      {askPassword ? (
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
      ) : null}
      <ErrorNotice error={error} />
      <div className="account-actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Turning on…' : 'Turn on two-factor sign-in'}
        </button>
        <button
          type="button"
          className="secondary"
          onClick={onCancel}
          disabled={busy}
        >
          Cancel
        </button>
      </div>
    </form>
  );
}

function RecoveryCodes({
  codes,
  onDone,
}: {
  codes: string[];
  onDone: () => void;
}) {
  const heading = useId();
  return (
    <div className="account-recovery" role="group" aria-labelledby={heading}>
      <Notice kind="info">Two-factor sign-in is on.</Notice>
      <h3 id={heading}>Recovery codes</h3>
      <p>
        Store these codes somewhere safe (a password manager, or printed). Each
        one signs you in once if you lose your authenticator.{' '}
        <strong>They are shown only now.</strong>
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

function DisableTwoFactor({
  status,
  onDisabled,
}: {
  status: TwoFactorStatus;
  onDisabled: () => Promise<void>;
}) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const { error, busy, onSubmit } = useFormAction(async () => {
    const value = code.trim();
    const factor = /^\d{3}\s*\d{3}$/.test(value)
      ? { code: value.replace(/\s+/g, '') }
      : { recoveryCode: value };
    unwrap(
      await api.POST('/v1/auth/2fa/disable', {
        body: { ...factor, ...(password ? { password } : {}) },
      }),
    );
    await onDisabled();
  });
  return (
    <form onSubmit={onSubmit} className="account-form">
      <p>
        <span className="badge badge-ok">On</span> Sign-in asks for a code from
        your authenticator app. {status.recoveryCodesLeft} recovery{' '}
        {status.recoveryCodesLeft === 1 ? 'code' : 'codes'} left.
      </p>
      <p>
        To turn it off, confirm with your password and a current code (or a
        recovery code).
      </p>
      <label>
        Password
        <input
          type="password"
          name="password"
          autoComplete="current-password"
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
      </label>
      <label>
        Authentication or recovery code
        <input
          name="code"
          autoComplete="one-time-code"
          autoCapitalize="none"
          spellCheck={false}
          required
          maxLength={64}
          value={code}
          onChange={(event) => setCode(event.target.value)}
        />
      </label>
      <ErrorNotice error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Turning off…' : 'Turn off two-factor sign-in'}
      </button>
    </form>
  );
}
