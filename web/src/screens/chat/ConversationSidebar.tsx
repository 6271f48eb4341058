import {
  useCallback,
  useEffect,
  useId,
  useState,
  useSyncExternalStore,
} from 'react';
import { Link } from 'wouter';
import { describeFailure } from '../../api/client';
import { navigate } from '../../navigation';
import { conversationsOf, useConversationList } from '../../queries';
import { RouteLink } from '../AuthScreens';
import { Notice } from '../Notice';

/** Wide enough for the list beside the chat (styles.css lays the two side by side from the same width). */
const WIDE = '(min-width: 60rem)';

function useMediaQuery(query: string): boolean {
  const subscribe = useCallback(
    (onChange: () => void) => {
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    [query],
  );
  return useSyncExternalStore(
    subscribe,
    () => window.matchMedia(query).matches,
  );
}

/**
 * The person's conversations beside the chat: newest first, a search, the open one marked, and New chat. On
 * a narrow screen the list folds away behind a button (and folds again once one is chosen).
 */
export function ConversationSidebar({ currentId }: { currentId?: string }) {
  const wide = useMediaQuery(WIDE);
  const [open, setOpen] = useState(false);
  const panel = useId();
  const shown = wide || open;
  return (
    <nav className="sidebar" aria-label="Conversations">
      {wide ? null : (
        <button
          type="button"
          className="secondary sidebar-toggle"
          aria-expanded={open}
          aria-controls={open ? panel : undefined}
          onClick={() => setOpen((current) => !current)}
        >
          Your conversations
        </button>
      )}
      {shown ? (
        <ConversationPanel
          id={panel}
          currentId={currentId}
          onChosen={() => setOpen(false)}
        />
      ) : null}
    </nav>
  );
}

function ConversationPanel({
  id,
  currentId,
  onChosen,
}: {
  id: string;
  currentId?: string;
  onChosen: () => void;
}) {
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  // The search runs a moment after typing stops.
  useEffect(() => {
    const timer = setTimeout(() => setSearch(query.trim()), 300);
    return () => clearTimeout(timer);
  }, [query]);
  const list = useConversationList(search);
  const items = conversationsOf(list.data);
  const heading = useId();

  return (
    <div id={id} className="sidebar-panel">
      <div className="sidebar-head">
        <h2 id={heading}>Conversations</h2>
        <button
          type="button"
          onClick={() => {
            onChosen();
            navigate('/');
          }}
        >
          New chat
        </button>
      </div>
      <form
        role="search"
        className="sidebar-search"
        onSubmit={(event) => (event.preventDefault(), setSearch(query.trim()))}
      >
        <label>
          <span className="visually-hidden">Search conversations</span>
          <input
            type="search"
            value={query}
            onChange={(event) => setQuery(event.target.value)}
            maxLength={200}
            placeholder="Search conversations"
          />
        </label>
      </form>
      {list.error ? (
        <Notice kind="error">{describeFailure(list.error)}</Notice>
      ) : null}
      {list.isPending ? (
        <p className="meta" role="status">
          Loading conversations…
        </p>
      ) : items.length === 0 && !list.error ? (
        <p className="meta">
          {search
            ? 'No conversation matches this search.'
            : 'No conversations yet.'}
        </p>
      ) : (
        <ul className="sidebar-list" aria-labelledby={heading}>
          {items.map((item) => (
            <li key={item.id}>
              <Link
                href={`/conversations/${item.id}`}
                aria-current={item.id === currentId ? 'page' : undefined}
                title={item.title}
                onClick={onChosen}
              >
                {item.title}
              </Link>
            </li>
          ))}
        </ul>
      )}
      {list.hasNextPage ? (
        <button
          type="button"
          className="secondary"
          onClick={() => void list.fetchNextPage()}
          disabled={list.isFetchingNextPage}
        >
          {list.isFetchingNextPage ? 'Loading…' : 'Show more'}
        </button>
      ) : null}
      <p className="sidebar-manage">
        <RouteLink to="/conversations">Rename, archive or delete</RouteLink>
      </p>
    </div>
  );
}
