import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef } from 'react';
import type { User } from './api/client';
import { meQuery, queryKeys } from './queries';

/** The signed-in person, or null; undefined while the first GET /v1/auth/me is on its way. */
export type Session = User | null | undefined;

/** What every signed-in screen gets: the person, and a way to re-read them after a change (plan, email, 2FA). */
export interface ScreenProps {
  user: User;
  refreshUser: () => Promise<void>;
}

/**
 * The session as GET /v1/auth/me tells it. Only a 401 means signed out; a 5xx or a network failure says
 * nothing about the session, so the person stays as they were (signed in, or still loading) and `failure`
 * says the service did not answer. `refresh` never rejects.
 */
export function useSession(): {
  user: Session;
  failure: unknown;
  refresh: () => Promise<void>;
  signedOut: () => void;
} {
  const queryClient = useQueryClient();
  const { data, error, refetch } = useQuery(meQuery);
  const refresh = useCallback(async () => {
    await refetch();
  }, [refetch]);
  // What the person read is theirs: nothing of it is kept for whoever signs in next in this tab, nor
  // shown to another account this tab finds itself in (a sign-in in another tab changed the cookie).
  const shownFor = useRef<string | null | undefined>(undefined);
  useEffect(() => {
    const id = data === undefined ? undefined : (data?.id ?? null);
    if (id === undefined || id === shownFor.current) return;
    const others = {
      predicate: (query: { queryKey: readonly unknown[] }) =>
        query.queryKey[0] !== queryKeys.me[0],
    };
    // Signed out: dropped. Another account: its screens read afresh (a reset refetches what is shown).
    if (id === null) queryClient.removeQueries(others);
    else if (shownFor.current) void queryClient.resetQueries(others);
    shownFor.current = id;
  }, [data, queryClient]);
  // A read of the person still on its way (sent before signing out) must not bring them back.
  const signedOut = useCallback(() => {
    void queryClient.cancelQueries({ queryKey: queryKeys.me });
    queryClient.setQueryData(queryKeys.me, null);
  }, [queryClient]);
  return { user: data, failure: error, refresh, signedOut };
}
