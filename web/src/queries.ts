import {
  keepPreviousData,
  QueryClient,
  queryOptions,
  useInfiniteQuery,
  useQuery,
} from '@tanstack/react-query';
import {
  api,
  ApiFailure,
  unwrap,
  type Plan,
  type Schemas,
  type User,
} from './api/client';

/**
 * The client's cache of what it read from the API (TanStack Query): the signed-in person, the plans, the
 * conversation list and each conversation. A screen reads through these queries and, after a change,
 * invalidates what the change made stale; the rest of the screens keep their own requests.
 *
 * No automatic retries (a failure is shown at once, with its own "try again") and no refetch on focus.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchOnWindowFocus: false },
      mutations: { retry: false },
    },
  });
}

export const queryKeys = {
  me: ['me'] as const,
  plans: ['plans'] as const,
  /** Every page of every conversation list (any search): what a new or renamed conversation makes stale. */
  conversationLists: ['conversations'] as const,
  conversationList: (search: string, archived: boolean) =>
    ['conversations', { search, archived }] as const,
  conversation: (id: string) => ['conversation', id] as const,
};

/** The signed-in person; null when signed out (a 401). Any other failure is thrown: the session is unknown. */
export const meQuery = queryOptions({
  queryKey: queryKeys.me,
  queryFn: async (): Promise<User | null> => {
    try {
      return unwrap(await api.GET('/v1/auth/me'));
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.status === 401) return null;
      throw failure;
    }
  },
});

const plansQuery = queryOptions({
  queryKey: queryKeys.plans,
  queryFn: async () => unwrap(await api.GET('/v1/plans')).data,
  // The catalogue changes rarely (an operator's catalog sync): read once per page load.
  staleTime: Infinity,
});

/** Every plan with its price, credits and models. */
export function usePlans() {
  return useQuery(plansQuery);
}

/** The models of one plan (by its code); empty while the plans are read, or when unknown. */
export function modelsOf(
  plans: Plan[] | undefined,
  planCode: string,
): Plan['models'] {
  return plans?.find((plan) => plan.code === planCode)?.models ?? [];
}

/** One conversation with its messages (the current version of each). */
export const conversationQuery = (id: string) =>
  queryOptions({
    queryKey: queryKeys.conversation(id),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/conversations/{id}', { params: { path: { id } } }),
      ),
    // Read just now (after an answer, or opened again at once): not read again.
    staleTime: 2_000,
  });

const PAGE_SIZE = 20;

/** The caller's conversations, newest activity first (with a search, the best matches first), page by page. */
export function useConversationList(search: string, archived = false) {
  return useInfiniteQuery({
    queryKey: queryKeys.conversationList(search, archived),
    queryFn: async ({ pageParam }) =>
      unwrap(
        await api.GET('/v1/conversations', {
          params: {
            query: {
              limit: PAGE_SIZE,
              ...(pageParam ? { cursor: pageParam } : {}),
              ...(search ? { q: search } : {}),
              ...(archived ? { archived: true } : {}),
            },
          },
        }),
      ),
    initialPageParam: '',
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    // Another search shows the last list until its own answer comes.
    placeholderData: keepPreviousData,
  });
}

type Summary = Schemas['ConversationSummaryDto'];

/** The conversations of every page read, each once (one whose activity moved it may be on two pages). */
export function conversationsOf(
  data: { pages: { data: Summary[] }[] } | undefined,
): Summary[] {
  const seen = new Set<string>();
  return (data?.pages ?? [])
    .flatMap((page) => page.data)
    .filter((item) => {
      if (seen.has(item.id)) return false;
      seen.add(item.id);
      return true;
    });
}
