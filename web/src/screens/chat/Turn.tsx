import type { FormEvent } from 'react';
import { PlainText } from '../../markdown/PlainText';
import { AnswerFeedback } from '../AnswerFeedback';
import { Notice } from '../Notice';
import { ToolCallList, type ToolView } from '../ToolCalls';
import { AnswerText } from './AnswerText';
import type { Exchange, Message } from './messages';

/** What the person can do with the messages of a conversation (all absent while an answer runs). */
export interface TurnActions {
  /** The message being edited (its key) and the edited text. */
  editing: { key: string; text: string } | null;
  setEditing: (editing: { key: string; text: string } | null) => void;
  saveEdit: (event: FormEvent, index: number) => void;
  regenerate: (index: number) => void;
  /** Shows another version of a message (an earlier answer, or the message before an edit). */
  switchTo: (messageId: string) => void;
  decide: (call: ToolView, decision: 'approve' | 'deny') => Promise<void>;
}

/**
 * One turn of a conversation: the person's question (as written, line breaks kept) and the answer (as
 * Markdown, rendered while it streams), each with its files, tool calls, usage, rating and actions.
 */
export function Turn({
  exchange,
  conversationId,
  busy,
  streaming,
  lastAnswerIndex,
  actions,
}: {
  exchange: Exchange;
  conversationId?: string;
  /** An answer is running in this conversation: the actions wait. */
  busy: boolean;
  /** This turn's answer is the one streaming in. */
  streaming: boolean;
  /** The index of the conversation's last answer (the one Regenerate replaces). */
  lastAnswerIndex: number;
  actions: TurnActions;
}) {
  const common = { conversationId, busy, lastAnswerIndex, actions };
  return (
    <>
      {exchange.question ? (
        <MessageItem
          {...common}
          message={exchange.question.message}
          index={exchange.question.index}
          streaming={false}
        />
      ) : null}
      {exchange.answer ? (
        <MessageItem
          {...common}
          message={exchange.answer.message}
          index={exchange.answer.index}
          streaming={streaming}
        />
      ) : null}
    </>
  );
}

function MessageItem({
  message,
  index,
  conversationId,
  busy,
  streaming,
  lastAnswerIndex,
  actions,
}: {
  message: Message;
  index: number;
  conversationId?: string;
  busy: boolean;
  streaming: boolean;
  lastAnswerIndex: number;
  actions: TurnActions;
}) {
  const { editing, setEditing } = actions;
  const versions =
    message.alternatives && message.alternatives.length > 1 && message.id
      ? message.alternatives
      : null;
  const position = versions ? versions.indexOf(message.id!) : -1;
  const isEditing = editing?.key === message.key;
  return (
    <li className={`turn turn-${message.role}`}>
      <span className="role">
        {message.role === 'user' ? 'You' : 'Assistant'}
      </span>
      <ToolCallList tools={message.tools ?? []} onDecide={actions.decide} />
      {isEditing ? (
        <form
          className="edit-form"
          onSubmit={(event) => actions.saveEdit(event, index)}
        >
          <label>
            Edited message
            <textarea
              rows={3}
              value={editing.text}
              onChange={(event) =>
                setEditing({ key: message.key, text: event.target.value })
              }
              required
            />
          </label>
          <div className="turn-actions">
            <button type="submit" disabled={busy || !editing.text.trim()}>
              Save and send
            </button>
            <button
              type="button"
              className="secondary"
              onClick={() => setEditing(null)}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : message.role === 'user' ? (
        <PlainText text={message.text} />
      ) : (
        <AnswerText text={message.text} streaming={streaming} />
      )}
      {message.files?.length ? (
        <p className="meta attached-files">
          Attached: {message.files.map((file) => file.name).join(', ')}
        </p>
      ) : null}
      {message.failure ? <Notice kind="error">{message.failure}</Notice> : null}
      {message.stopped ? <p className="meta">Stopped.</p> : null}
      {message.usage ? (
        <p className="meta usage">
          {message.usage.inputTokens} tokens in · {message.usage.outputTokens}{' '}
          out · {message.usage.credits} credits
        </p>
      ) : null}
      {message.role === 'assistant' && message.id && conversationId ? (
        <AnswerFeedback
          key={message.id}
          conversationId={conversationId}
          messageId={message.id}
          initial={message.feedback ?? null}
        />
      ) : null}
      {!isEditing && !busy && conversationId ? (
        <div className="turn-actions">
          {versions && position !== -1 ? (
            <span className="versions">
              <button
                type="button"
                className="secondary"
                aria-label="Previous version"
                disabled={position === 0}
                onClick={() => actions.switchTo(versions[position - 1])}
              >
                ‹
              </button>
              <span className="meta">
                Version {position + 1} of {versions.length}
              </span>
              <button
                type="button"
                className="secondary"
                aria-label="Next version"
                disabled={position === versions.length - 1}
                onClick={() => actions.switchTo(versions[position + 1])}
              >
                ›
              </button>
            </span>
          ) : null}
          {message.role === 'user' && message.id ? (
            <button
              type="button"
              className="secondary"
              onClick={() =>
                setEditing({ key: message.key, text: message.text })
              }
            >
              Edit
            </button>
          ) : null}
          {message.role === 'assistant' && index === lastAnswerIndex ? (
            <button
              type="button"
              className="secondary"
              onClick={() => actions.regenerate(index)}
            >
              Regenerate
            </button>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}
