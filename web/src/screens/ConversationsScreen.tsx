import {
  useCallback,
  useEffect,
  useRef,
  useState,
  type FormEvent,
  type MouseEvent,
} from 'react';
import {
  api,
  ApiFailure,
  describeFailure,
  unwrap,
  type Schemas,
} from '../api/client';
import type { ScreenProps } from '../App';
import { navigate, usePath } from '../navigation';
import { ChatScreen } from './ChatScreen';
import { FieldErrors, Notice } from './Notice';
import './chat.css';

type Summary = Schemas['ConversationSummaryDto'];

const PAGE_SIZE = 20;

/** /conversations: the list (search, archived, rename, archive, delete); /conversations/{id}: that conversation. */
export function ConversationsScreen(props: ScreenProps) {
  const path = usePath();
  const id = /^\/conversations\/([^/]+)\/?$/.exec(path)?.[1];
  if (id) return <ChatScreen key={id} {...props} />;
  return <ConversationList />;
}

function ConversationList() {
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const [archived, setArchived] = useState(false);
  const [items, setItems] = useState<Summary[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  /** Answers of an older search arriving late are dropped. */
  const generation = useRef(0);

  // A new search (or the archived switch) starts without the last one's failure: adjusted while rendering.
  const [listed, setListed] = useState({ search, archived });
  if (listed.search !== search || listed.archived !== archived) {
    setListed({ search, archived });
    setError(null);
  }

  // The search runs a moment after typing stops.
  useEffect(() => {
    const timer = setTimeout(() => setSearch(query.trim()), 300);
    return () => clearTimeout(timer);
  }, [query]);

  const fetchPage = useCallback(
    (cursor?: string) =>
      api.GET('/v1/conversations', {
        params: {
          query: {
            limit: PAGE_SIZE,
            ...(cursor ? { cursor } : {}),
            ...(search ? { q: search } : {}),
            ...(archived ? { archived: true } : {}),
          },
        },
      }),
    [search, archived],
  );

  useEffect(() => {
    const mine = ++generation.current;
    void (async () => {
      try {
        const page = unwrap(await fetchPage());
        if (mine !== generation.current) return;
        setItems(page.data);
        setNextCursor(page.nextCursor);
      } catch (failure) {
        if (mine === generation.current) setError(failure);
      }
    })();
  }, [fetchPage]);

  const loadMore = async () => {
    if (!nextCursor) return;
    const mine = generation.current;
    setLoadingMore(true);
    try {
      const page = unwrap(await fetchPage(nextCursor));
      if (mine !== generation.current) return;
      setItems((current) => {
        const seen = new Set((current ?? []).map((item) => item.id));
        return [
          ...(current ?? []),
          ...page.data.filter((item) => !seen.has(item.id)),
        ];
      });
      setNextCursor(page.nextCursor);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoadingMore(false);
    }
  };

  const replace = (updated: Summary) =>
    setItems((current) =>
      (current ?? []).map((item) =>
        item.id === updated.id ? { ...item, ...updated } : item,
      ),
    );
  const remove = (id: string) =>
    setItems((current) => (current ?? []).filter((item) => item.id !== id));

  return (
    <section className="conversations" aria-labelledby="conversations-title">
      <h1 id="conversations-title">Conversations</h1>
      <form
        className="conversation-filters"
        role="search"
        onSubmit={(event) => (event.preventDefault(), setSearch(query.trim()))}
      >
        <label>
          Search conversations
          <input
            type="search"
            value={query}
            onChange={(event) => setQuery(event.target.value)}
            maxLength={200}
            placeholder="Words in titles or messages"
          />
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={archived}
            onChange={(event) => setArchived(event.target.checked)}
          />
          Show archived
        </label>
      </form>
      {status ? <Notice kind="info">{status}</Notice> : null}
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
      {items === null && !error ? (
        <p role="status">Loading conversations…</p>
      ) : null}
      {items !== null && items.length === 0 ? (
        <p className="empty">
          {search
            ? 'No conversation matches this search.'
            : archived
              ? 'No archived conversations.'
              : 'No conversations yet. Start one in Chat.'}
        </p>
      ) : null}
      {items && items.length > 0 ? (
        <ul
          className="conversation-list"
          aria-label={archived ? 'Archived conversations' : 'Conversations'}
        >
          {items.map((item) => (
            <ConversationItem
              key={item.id}
              item={item}
              onChanged={replace}
              onGone={remove}
              onStatus={setStatus}
            />
          ))}
        </ul>
      ) : null}
      {nextCursor ? (
        <button
          type="button"
          onClick={() => void loadMore()}
          disabled={loadingMore}
        >
          {loadingMore ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </section>
  );
}

function ConversationItem({
  item,
  onChanged,
  onGone,
  onStatus,
}: {
  item: Summary;
  onChanged: (item: Summary) => void;
  onGone: (id: string) => void;
  onStatus: (text: string | null) => void;
}) {
  const [mode, setMode] = useState<'view' | 'rename' | 'delete'>('view');
  const [title, setTitle] = useState(item.title);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const href = `/conversations/${item.id}`;

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    onStatus(null);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const patch = (body: { title?: string; archived?: boolean }) =>
    api.PATCH('/v1/conversations/{id}', {
      params: { path: { id: item.id } },
      body,
    });

  const rename = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      const updated = unwrap(await patch({ title: title.trim() }));
      onChanged({ ...item, title: updated.title });
      setMode('view');
    });
  };

  const toggleArchived = () =>
    void act(async () => {
      unwrap(await patch({ archived: !item.archived }));
      onGone(item.id);
      onStatus(
        item.archived
          ? `“${item.title}” is back in your conversations.`
          : `“${item.title}” archived. Tick “Show archived” to see it.`,
      );
    });

  const remove = () =>
    void act(async () => {
      unwrap(
        await api.DELETE('/v1/conversations/{id}', {
          params: { path: { id: item.id } },
        }),
      );
      onGone(item.id);
      onStatus(`“${item.title}” deleted.`);
    });

  const open = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0)
      return;
    event.preventDefault();
    navigate(href);
  };

  return (
    <li className="conversation-item">
      {mode === 'rename' ? (
        <form className="rename-form" onSubmit={rename}>
          <label>
            New title
            <input
              value={title}
              onChange={(event) => setTitle(event.target.value)}
              required
              maxLength={200}
              autoFocus
            />
          </label>
          <div className="item-actions">
            <button type="submit" disabled={busy || !title.trim()}>
              Save
            </button>
            <button
              type="button"
              className="secondary"
              onClick={() => (
                setMode('view'),
                setTitle(item.title),
                setError(null)
              )}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <a className="conversation-link" href={href} onClick={open}>
            {item.title}
          </a>
          <span className="meta">
            Last activity{' '}
            <time dateTime={item.updatedAt}>
              {new Date(item.updatedAt).toLocaleString()}
            </time>
            {item.archived ? ' · archived' : ''}
          </span>
          {mode === 'delete' ? (
            <div
              className="confirm"
              role="group"
              aria-label={`Delete “${item.title}”?`}
            >
              <p>
                Delete this conversation and all its messages? This cannot be
                undone.
              </p>
              <div className="item-actions">
                <button
                  type="button"
                  className="danger"
                  onClick={remove}
                  disabled={busy}
                >
                  Delete for good
                </button>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => setMode('view')}
                  disabled={busy}
                >
                  Keep it
                </button>
              </div>
            </div>
          ) : (
            <div className="item-actions">
              <button
                type="button"
                className="secondary"
                onClick={() => (setTitle(item.title), setMode('rename'))}
                disabled={busy}
              >
                Rename
              </button>
              <button
                type="button"
                className="secondary"
                onClick={toggleArchived}
                disabled={busy}
              >
                {item.archived ? 'Unarchive' : 'Archive'}
              </button>
              <button
                type="button"
                className="secondary"
                onClick={() => setMode('delete')}
                disabled={busy}
              >
                Delete
              </button>
            </div>
          )}
        </>
      )}
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
      {error instanceof ApiFailure ? (
        <FieldErrors fields={error.fields} />
      ) : null}
    </li>
  );
}
