import { useId, useRef, useState } from 'react';
import { describeFailure } from '../api/client';
import { shareConversation, stopSharing, type Share } from '../api/shares';
import { Notice } from './Notice';
import './share.css';

/**
 * Sharing an open conversation by link: Share makes a read-only link to the conversation as it is now
 * (POST /v1/conversations/{id}/share), shown with a copy button; Update link shares it again under a new
 * link (the previous one stops working); Stop sharing takes it down. `share`: the conversation's own state.
 */
export function ShareControl({
  conversationId,
  share,
  onChange,
  disabled,
}: {
  conversationId: string;
  share: Share | null;
  onChange: (share: Share | null) => void;
  disabled: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const link = useRef<HTMLInputElement>(null);
  const id = useId();

  const act = async (work: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      setStatus(await work());
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const create = () =>
    void act(async () => {
      const updated = Boolean(share);
      onChange(await shareConversation(conversationId));
      return updated
        ? 'Link updated: this is a new link, and the previous one no longer works.'
        : 'Link created: anyone with it can read this conversation.';
    });

  const stop = () =>
    void act(async () => {
      await stopSharing(conversationId);
      onChange(null);
      return 'Sharing stopped: the link no longer works.';
    });

  const copy = async () => {
    if (!share) return;
    try {
      await navigator.clipboard.writeText(share.url);
      setStatus('Link copied.');
    } catch {
      // No clipboard access (an insecure origin, or refused): the link is selected for a manual copy.
      link.current?.select();
      setStatus('Copy the selected link (Ctrl+C, or ⌘C on a Mac).');
    }
  };

  return (
    <section className="share-control" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`} className="visually-hidden">
        Sharing
      </h2>
      {share ? (
        <>
          <div className="share-link">
            <label htmlFor={`${id}-url`}>Share link</label>
            <input
              id={`${id}-url`}
              ref={link}
              readOnly
              value={share.url}
              aria-describedby={`${id}-about`}
              onFocus={(event) => event.currentTarget.select()}
            />
            <button type="button" onClick={() => void copy()}>
              Copy link
            </button>
          </div>
          <p id={`${id}-about`} className="meta">
            Anyone with this link can read the {share.messageCount}{' '}
            {share.messageCount === 1 ? 'message' : 'messages'} shared on{' '}
            <time dateTime={share.createdAt}>
              {new Date(share.createdAt).toLocaleString()}
            </time>
            , without signing in. Later messages are not in it: Update link
            shares the conversation as it is now under a new link, and the
            current link stops working.
          </p>
          <div className="share-actions">
            <button
              type="button"
              className="secondary"
              onClick={create}
              disabled={busy || disabled}
            >
              Update link
            </button>
            <button
              type="button"
              className="secondary"
              onClick={stop}
              disabled={busy}
            >
              Stop sharing
            </button>
          </div>
        </>
      ) : (
        <div className="share-actions">
          <button
            type="button"
            className="secondary"
            onClick={create}
            disabled={busy || disabled}
            aria-describedby={`${id}-about`}
          >
            Share
          </button>
          <p id={`${id}-about`} className="meta">
            Makes a read-only link to this conversation as it is now.
          </p>
        </div>
      )}
      {status ? <Notice kind="info">{status}</Notice> : null}
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
    </section>
  );
}
