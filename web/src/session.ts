import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect } from 'react';
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
  // What the person read is theirs: nothing of it is kept for whoever signs in next in this tab.
  useEffect(() => {
    if (data === null)
      queryClient.removeQueries({
        predicate: (query) => query.queryKey[0] !== queryKeys.me[0],
      });
  }, [data, queryClient]);
  const signedOut = useCallback(
    () => queryClient.setQueryData(queryKeys.me, null),
    [queryClient],
  );
  return { user: data, failure: error, refresh, signedOut };
}
