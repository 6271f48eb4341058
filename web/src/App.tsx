import { useCallback, useEffect, useState } from 'react';
import { api, ApiFailure, unwrap, type User } from './api/client';
import { navigate, usePath } from './navigation';
import { SignInScreen, SignUpScreen } from './screens/AuthScreens';
import { ChatScreen } from './screens/ChatScreen';

/** The signed-in person, or null; undefined while the first GET /v1/auth/me is on its way. */
export type Session = User | null | undefined;

export function App() {
  const path = usePath();
  const [user, setUser] = useState<Session>(undefined);

  const refresh = useCallback(async () => {
    try {
      setUser(unwrap(await api.GET('/v1/auth/me')));
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) setUser(null);
      else setUser(null);
    }
  }, []);
  useEffect(() => void refresh(), [refresh]);

  const signOut = async () => {
    await api.POST('/v1/auth/logout');
    setUser(null);
    navigate('/sign-in');
  };

  if (user === undefined) return <p className="loading" role="status">Loading…</p>;
  if (user === null) {
    if (path === '/sign-up') return <SignUpScreen onSignedIn={refresh} />;
    return <SignInScreen onSignedIn={refresh} />;
  }
  return (
    <div className="shell">
      <header className="topbar">
        <a href="/" onClick={(event) => (event.preventDefault(), navigate('/'))} className="brand">
          Chat
        </a>
        <nav aria-label="Main">
          <span className="who">{user.email}</span>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </nav>
      </header>
      <main>
        <ChatScreen user={user} />
      </main>
    </div>
  );
}
