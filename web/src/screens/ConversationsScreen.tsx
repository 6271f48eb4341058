import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import {
  api,
  ApiFailure,
  describeFailure,
  unwrap,
  type Schemas,
} from '../api/client';
import { conversationsOf, queryKeys, useConversationList } from '../queries';
import { FieldErrors, Notice } from './Notice';
import './chat.css';

type Summary = Schemas['ConversationSummaryDto'];

/**
 * /conversations: every conversation, to find (search, archived) and to rename, archive or delete. Each
 * opens at /conversations/{id}, the chat.
 */
export function ConversationsScreen() {
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const [archived, setArchived] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  const list = useConversationList(search, archived);
  const items = list.data ? conversationsOf(list.data) : null;

  // The search runs a moment after typing stops.
  useEffect(() => {
    const timer = setTimeout(() => setSearch(query.trim()), 300);
    return () => clearTimeout(timer);
  }, [query]);

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
      {list.error ? (
        <Notice kind="error">{describeFailure(list.error)}</Notice>
      ) : null}
      {items === null && !list.error ? (
        <p role="status">Loading conversations…</p>
      ) : null}
      {items !== null && items.length === 0 && !list.isPlaceholderData ? (
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
            <ConversationItem key={item.id} item={item} onStatus={setStatus} />
          ))}
        </ul>
      ) : null}
      {list.hasNextPage ? (
        <button
          type="button"
          onClick={() => void list.fetchNextPage()}
          disabled={list.isFetchingNextPage}
        >
          {list.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </section>
  );
}

function ConversationItem({
  item,
  onStatus,
}: {
  item: Summary;
  onStatus: (text: string | null) => void;
}) {
  const [mode, setMode] = useState<'view' | 'rename' | 'delete'>('view');
  const [title, setTitle] = useState(item.title);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const href = `/conversations/${item.id}`;

  const queryClient = useQueryClient();
  /** Every cached list shows the change at once (this one, the chat's sidebar), then is read again. */
  const changed = async (update: (items: Summary[]) => Summary[]) => {
    queryClient.setQueriesData<{ pages: { data: Summary[] }[] }>(
      { queryKey: queryKeys.conversationLists },
      (data) =>
        data && {
          ...data,
          pages: data.pages.map((page) => ({
            ...page,
            data: update(page.data),
          })),
        },
    );
    await queryClient.invalidateQueries({
      queryKey: queryKeys.conversationLists,
    });
  };

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
      setMode('view');
      void queryClient.invalidateQueries({
        queryKey: queryKeys.conversation(item.id),
      });
      await changed((items) =>
        items.map((other) =>
          other.id === item.id ? { ...other, title: updated.title } : other,
        ),
      );
    });
  };

  const toggleArchived = () =>
    void act(async () => {
      unwrap(await patch({ archived: !item.archived }));
      onStatus(
        item.archived
          ? `“${item.title}” is back in your conversations.`
          : `“${item.title}” archived. Tick “Show archived” to see it.`,
      );
      await changed((items) => items.filter((other) => other.id !== item.id));
    });

  const remove = () =>
    void act(async () => {
      unwrap(
        await api.DELETE('/v1/conversations/{id}', {
          params: { path: { id: item.id } },
        }),
      );
      onStatus(`“${item.title}” deleted.`);
      queryClient.removeQueries({ queryKey: queryKeys.conversation(item.id) });
      await changed((items) => items.filter((other) => other.id !== item.id));
    });

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
          <Link className="conversation-link" href={href}>
            {item.title}
          </Link>
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
