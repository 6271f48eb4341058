import { useCallback, useEffect, useState } from 'react';
import { api, unwrap, type Schemas } from '../../api/client';
import { Notice } from '../Notice';
import { ErrorNotice, Section } from './section';

type SessionItem = Schemas['SessionDto'];

function formatTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'short',
  });
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

export function SessionsSection() {
  const [sessions, setSessions] = useState<SessionItem[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [ending, setEnding] = useState<string | null>(null);
  const [ended, setEnded] = useState(false);

  const load = useCallback(
    () =>
      api
        .GET('/v1/auth/sessions')
        .then((result) => setSessions(unwrap(result).items))
        .catch(setError),
    [],
  );
  useEffect(() => void load(), [load]);

  const end = async (id: string) => {
    setEnding(id);
    setError(null);
    setEnded(false);
    try {
      unwrap(
        await api.DELETE('/v1/auth/sessions/{id}', {
          params: { path: { id } },
        }),
      );
      // The list without it, then the notice: what is announced matches what is shown.
      setSessions(
        (current) => current?.filter((session) => session.id !== id) ?? current,
      );
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
        error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <ul className="account-sessions">
          {sessions.map((session) => {
            const name = deviceName(session.userAgent);
            return (
              <li
                key={session.id}
                className={session.current ? 'current' : undefined}
              >
                <div className="account-session-head">
                  <strong title={session.userAgent ?? undefined}>{name}</strong>
                  {session.current ? (
                    <span className="badge badge-ok">This device</span>
                  ) : null}
                </div>
                <dl>
                  <dt>Signed in</dt>
                  <dd>{formatTime(session.createdAt)}</dd>
                  <dt>Last seen</dt>
                  <dd>{formatTime(session.lastSeenAt)}</dd>
                  <dt>IP address</dt>
                  <dd>{session.ip ?? 'Unknown'}</dd>
                  <dt>Browser</dt>
                  <dd className="account-agent">
                    {session.userAgent ?? 'Unknown'}
                  </dd>
                </dl>
                {session.current ? null : (
                  <button
                    type="button"
                    className="secondary"
                    disabled={ending !== null}
                    aria-label={`End session: ${name}, signed in ${formatTime(session.createdAt)}`}
                    onClick={() => void end(session.id)}
                  >
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
