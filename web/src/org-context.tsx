import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
  type ReactNode,
} from 'react';
import { api, unwrap } from './api/client';
import type { Organization } from './api/orgs';
import { announceQuotaChanged } from './api/quota-events';

/** The person's organizations and the one they work in: Personal (null) or one of them. */
export interface OrgState {
  /** The caller's organizations; null until the first list has come. */
  orgs: Organization[] | null;
  /** The chosen organization, null for Personal. Known once `ready`. */
  current: Organization | null;
  /** Whether the list is read, so that `current` is decided. */
  ready: boolean;
  /** Chooses Personal (null) or an organization; remembered in this browser. */
  select: (id: string | null) => void;
  /** Reads the list again (after a create, a rename, a join, a leave). */
  refresh: () => Promise<void>;
}

const PERSONAL: OrgState = {
  orgs: [],
  current: null,
  ready: true,
  select: () => undefined,
  refresh: () => Promise.resolve(),
};

const OrgContext = createContext<OrgState>(PERSONAL);

const storageKey = (userId: string) => `chat.organization.${userId}`;

function stored(userId: string): string | null {
  try {
    return window.localStorage.getItem(storageKey(userId));
  } catch {
    return null;
  }
}

/**
 * Holds the organization state of one signed-in person (keyed by them: another person starts afresh). The
 * choice is kept in localStorage per person and follows changes made in other tabs.
 */
export function OrgProvider({
  userId,
  children,
}: {
  userId: string;
  children: ReactNode;
}) {
  const [orgs, setOrgs] = useState<Organization[] | null>(null);
  const [selected, setSelected] = useState<string | null>(() => stored(userId));

  const refresh = useCallback(
    () =>
      api
        .GET('/v1/orgs')
        .then((result) => setOrgs(unwrap(result).data))
        // Unreadable (the service is down): Personal until the next read; the choice stays stored.
        .catch(() => setOrgs((current) => current ?? [])),
    [],
  );
  useEffect(() => void refresh(), [refresh]);

  useEffect(() => {
    const onStorage = (event: StorageEvent) => {
      if (event.key === storageKey(userId)) setSelected(event.newValue);
    };
    window.addEventListener('storage', onStorage);
    return () => window.removeEventListener('storage', onStorage);
  }, [userId]);

  const select = useCallback(
    (id: string | null) => {
      try {
        if (id) window.localStorage.setItem(storageKey(userId), id);
        else window.localStorage.removeItem(storageKey(userId));
      } catch {
        // Storage refused (private mode): the choice lasts for this page.
      }
      setSelected(id);
      announceQuotaChanged();
    },
    [userId],
  );

  const value = useMemo<OrgState>(
    () => ({
      orgs,
      current: orgs?.find((org) => org.id === selected) ?? null,
      ready: orgs !== null,
      select,
      refresh,
    }),
    [orgs, selected, select, refresh],
  );
  return <OrgContext.Provider value={value}>{children}</OrgContext.Provider>;
}

export function useOrgs(): OrgState {
  return useContext(OrgContext);
}
