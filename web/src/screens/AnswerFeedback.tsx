import { useId, useState, type FormEvent } from 'react';
import { ApiFailure, describeFailure } from '../api/client';
import {
  clearRating,
  rateAnswer,
  type Feedback,
  type Rating,
} from '../api/shares';
import { FieldErrors, Notice } from './Notice';
import './share.css';

const THUMBS: { rating: Rating; name: string }[] = [
  { rating: 'up', name: 'Thumbs up' },
  { rating: 'down', name: 'Thumbs down' },
];

/** A thumb drawn inline (no emoji font needed); thumbs down is the same one turned over (share.css). */
function ThumbIcon() {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
      <path
        fill="currentColor"
        d="M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z"
      />
    </svg>
  );
}

/**
 * Thumbs up or down on one answer, with an optional comment (offered at once after a thumbs down). Choosing
 * the chosen thumb again removes the rating. `initial`: the rating stored with the message; from then on
 * this keeps what it last saved.
 */
export function AnswerFeedback({
  conversationId,
  messageId,
  initial,
}: {
  conversationId: string;
  messageId: string;
  initial: Feedback | null;
}) {
  const [feedback, setFeedback] = useState<Feedback | null>(initial);
  const [commenting, setCommenting] = useState(false);
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const id = useId();

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  /** PUT replaces the whole rating: the tags (set by other clients) are sent along to keep them. */
  const save = (rating: Rating, text: string | null) =>
    rateAnswer(conversationId, messageId, {
      rating,
      ...(feedback?.tags.length ? { tags: feedback.tags } : {}),
      ...(text ? { comment: text } : {}),
    });

  const openComment = (current: Feedback) => {
    setComment(current.comment ?? '');
    setCommenting(true);
  };

  const choose = (rating: Rating) =>
    void act(async () => {
      if (feedback?.rating === rating) {
        await clearRating(conversationId, messageId);
        setFeedback(null);
        setCommenting(false);
        setStatus('Rating removed.');
        return;
      }
      const saved = await save(rating, feedback?.comment ?? null);
      setFeedback(saved);
      setStatus(
        rating === 'up'
          ? 'Thanks: rated as a good answer.'
          : 'Thanks: rated as a poor answer.',
      );
      if (rating === 'down') openComment(saved);
    });

  const submitComment = (event: FormEvent) => {
    event.preventDefault();
    if (!feedback) return;
    const rating = feedback.rating;
    void act(async () => {
      setFeedback(await save(rating, comment.trim() || null));
      setCommenting(false);
      setStatus(comment.trim() ? 'Comment saved.' : 'Comment removed.');
    });
  };

  return (
    <div className="answer-feedback">
      <div
        className="feedback-buttons"
        role="group"
        aria-label="Rate this answer"
      >
        {THUMBS.map((thumb) => (
          <button
            key={thumb.rating}
            type="button"
            className={`thumb thumb-${thumb.rating}`}
            aria-label={thumb.name}
            title={
              feedback?.rating === thumb.rating
                ? `${thumb.name} (chosen: choose again to remove)`
                : thumb.name
            }
            aria-pressed={feedback?.rating === thumb.rating}
            disabled={busy}
            onClick={() => choose(thumb.rating)}
          >
            <ThumbIcon />
          </button>
        ))}
        {feedback && !commenting ? (
          <button
            type="button"
            className="link-button"
            onClick={() => openComment(feedback)}
            disabled={busy}
          >
            {feedback.comment ? 'Edit comment' : 'Add a comment'}
          </button>
        ) : null}
      </div>
      {feedback?.comment && !commenting ? (
        <p className="meta feedback-comment">
          Your comment: {feedback.comment}
        </p>
      ) : null}
      {commenting ? (
        <form className="feedback-form" onSubmit={submitComment}>
          <label htmlFor={`${id}-comment`}>Comment (optional)</label>
          <textarea
            id={`${id}-comment`}
            rows={2}
            maxLength={2000}
            value={comment}
            placeholder="What was good or wrong in this answer?"
            onChange={(event) => setComment(event.target.value)}
          />
          <div className="turn-actions">
            <button type="submit" disabled={busy}>
              Save comment
            </button>
            <button
              type="button"
              className="secondary"
              onClick={() => setCommenting(false)}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      {status ? (
        <p className="meta" role="status">
          {status}
        </p>
      ) : null}
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
      {error instanceof ApiFailure ? (
        <FieldErrors fields={error.fields} />
      ) : null}
    </div>
  );
}
