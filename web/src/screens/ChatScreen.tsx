import { useEffect, useRef, useState, type FormEvent } from 'react';
import { streamChat, type Usage } from '../api/chat-stream';
import { api, describeFailure, unwrap, type Plan } from '../api/client';
import type { ScreenProps } from '../App';
import { Notice } from './Notice';

interface Turn {
  role: 'user' | 'assistant';
  text: string;
  usage?: Usage;
  failure?: string;
  stopped?: boolean;
}

/** One conversation: a model picker limited to the plan's models, the answer streaming in, stop, usage. */
export function ChatScreen({ user }: ScreenProps) {
  const [models, setModels] = useState<Plan['models']>([]);
  const [model, setModel] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState('');
  const [conversationId, setConversationId] = useState<string | undefined>();
  const [error, setError] = useState<unknown>(null);
  const running = useRef<{ key: string; abort: AbortController } | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    void (async () => {
      try {
        const plans = unwrap(await api.GET('/v1/plans')).data;
        const mine = plans.find((plan) => plan.code === user.plan.code)?.models ?? [];
        setModels(mine);
        setModel((current) => current || mine[0]?.id || '');
      } catch (failure) {
        setError(failure);
      }
    })();
  }, [user.plan.code]);

  const updateLast = (change: (turn: Turn) => Turn) => setTurns((all) => [...all.slice(0, -1), change(all[all.length - 1])]);

  const send = async (event: FormEvent) => {
    event.preventDefault();
    const content = draft.trim();
    if (!content || busy) return;
    const key = crypto.randomUUID();
    const abort = new AbortController();
    running.current = { key, abort };
    setBusy(true);
    setError(null);
    setDraft('');
    setTurns((all) => [...all, { role: 'user', text: content }, { role: 'assistant', text: '' }]);
    try {
      for await (const chatEvent of streamChat({ model, idempotencyKey: key, conversationId, messages: [{ role: 'user', content }] }, abort.signal)) {
        if (chatEvent.type === 'meta') setConversationId(chatEvent.conversationId);
        else if (chatEvent.type === 'delta') updateLast((turn) => ({ ...turn, text: turn.text + chatEvent.text }));
        else if (chatEvent.type === 'usage') updateLast((turn) => ({ ...turn, usage: chatEvent.usage }));
        else if (chatEvent.type === 'error') updateLast((turn) => ({ ...turn, failure: chatEvent.message }));
        else if (chatEvent.type === 'done' && chatEvent.status === 'stopped') updateLast((turn) => ({ ...turn, stopped: true }));
      }
    } catch (failure) {
      if (!abort.signal.aborted) {
        setTurns((all) => all.slice(0, -1));
        setError(failure);
      }
    } finally {
      running.current = null;
      setBusy(false);
    }
  };

  /** Stops the generation on whichever instance runs it; the stream then ends with what was written. */
  const stop = async () => {
    const current = running.current;
    if (!current) return;
    try {
      unwrap(await api.POST('/v1/chat/stop', { body: { idempotencyKey: current.key } }));
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section className="chat" aria-label="Chat">
      <div className="chat-controls">
        <label>
          Model
          <select value={model} onChange={(event) => setModel(event.target.value)} disabled={busy}>
            {models.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => (setTurns([]), setConversationId(undefined))} disabled={busy}>
          New conversation
        </button>
      </div>
      <ol className="turns" aria-live="polite" aria-label="Conversation">
        {turns.map((turn, index) => (
          <li key={index} className={`turn turn-${turn.role}`}>
            <span className="role">{turn.role === 'user' ? 'You' : 'Assistant'}</span>
            <div className="text">{turn.text || (turn.role === 'assistant' && busy && index === turns.length - 1 ? '…' : '')}</div>
            {turn.failure ? <Notice kind="error">{turn.failure}</Notice> : null}
            {turn.stopped ? <p className="meta">Stopped.</p> : null}
            {turn.usage ? (
              <p className="meta usage">
                {turn.usage.inputTokens} tokens in · {turn.usage.outputTokens} out · {turn.usage.credits} credits
              </p>
            ) : null}
          </li>
        ))}
      </ol>
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
      <form className="composer" onSubmit={(event) => void send(event)}>
        <label className="visually-hidden" htmlFor="message">
          Message
        </label>
        <textarea id="message" name="message" rows={3} value={draft} onChange={(event) => setDraft(event.target.value)} placeholder="Write a message" required />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={!model}>
            Send
          </button>
        )}
      </form>
    </section>
  );
}
