import {
  useCallback,
  useEffect,
  useRef,
  useState,
  type FormEvent,
} from 'react';
import {
  EVENT_STREAM,
  eventsOrRefusal,
  type ChatEvent,
  type ChatRequest,
  type Usage,
} from '../api/chat-stream';
import {
  api,
  ApiFailure,
  describeFailure,
  failureOf,
  unwrap,
  type Plan,
  type Schemas,
} from '../api/client';
import { announceQuotaChanged } from '../api/quota-events';
import type { Feedback, Share } from '../api/shares';
import type { ScreenProps } from '../App';
import { navigate, usePath } from '../navigation';
import { useOrgs } from '../org-context';
import { AnswerFeedback } from './AnswerFeedback';
import { RouteLink } from './AuthScreens';
import { FieldErrors, Notice } from './Notice';
import { ShareControl } from './ShareControl';
import {
  ToolCallList,
  ToolPicker,
  withToolEvent,
  type ToolInfo,
  type ToolView,
} from './ToolCalls';
import './chat.css';

type ConversationMessage = Schemas['ConversationMessageDto'];
type FileItem = Schemas['FileDto'];
type RegenerateBody = Schemas['RegenerateDto'];
type EditBody = Schemas['EditMessageDto'];

interface Turn {
  /** React key: the message id once known, else a local one. */
  key: string;
  /** The stored message's id (absent while its answer streams in). */
  id?: string;
  role: 'user' | 'assistant';
  text: string;
  usage?: Usage;
  failure?: string;
  stopped?: boolean;
  files?: { id: string; name: string }[];
  /** Ids of the messages following the same parent, this one included (several after a regenerate or an edit). */
  alternatives?: string[];
  /** The tools an answer called. */
  tools?: ToolView[];
  /** The person's rating of a stored answer. */
  feedback?: Feedback | null;
}

/** What starts an answer: a new turn, the last answer again, or a user message replaced. */
type TurnStart =
  | { kind: 'chat'; body: ChatRequest }
  | { kind: 'regenerate'; conversationId: string; body: RegenerateBody }
  | { kind: 'edit'; conversationId: string; messageId: string; body: EditBody };

/** A refusal before the first byte, with the quota's reset time when the problem names it. */
class TurnFailure extends ApiFailure {
  constructor(
    base: ApiFailure,
    readonly resetsAt?: string,
  ) {
    super(
      base.status,
      base.code,
      base.message,
      base.fields,
      base.retryAfterSeconds,
    );
  }
}

/** Any of the three answer routes as server-sent events; a refusal before the first byte is thrown. */
async function* streamTurn(
  start: TurnStart,
  signal: AbortSignal,
): AsyncGenerator<ChatEvent> {
  const options = { ...EVENT_STREAM, signal };
  const result =
    start.kind === 'chat'
      ? await api.POST('/v1/chat', { ...options, body: start.body })
      : start.kind === 'regenerate'
        ? await api.POST('/v1/conversations/{id}/regenerate', {
            ...options,
            params: { path: { id: start.conversationId } },
            body: start.body,
          })
        : await api.POST('/v1/conversations/{id}/messages/{messageId}/edit', {
            ...options,
            params: {
              path: { id: start.conversationId, messageId: start.messageId },
            },
            body: start.body,
          });
  yield* eventsOrRefusal(result, (problem) => {
    const resetsAt =
      typeof problem === 'object' && problem !== null && 'resetsAt' in problem
        ? String(problem.resetsAt)
        : undefined;
    return new TurnFailure(failureOf(result.response, problem), resetsAt);
  });
}

/**
 * What a person reads when an answer could not start: the quota, a rate limit and provider failures in plain
 * words. `orgName`: the organization whose pool was to pay.
 */
export function describeChatFailure(error: unknown, orgName?: string): string {
  if (error instanceof ApiFailure) {
    if (error.code === 'org_plan_required')
      return `${orgName ?? 'The organization'} has no paid plan, so no credit pool to pay for this: an admin or owner buys seats on its Organization page. Switch to Personal to use your own credits.`;
    if (error.code === 'quota_exceeded') {
      const resetsAt =
        error instanceof TurnFailure && error.resetsAt
          ? new Date(error.resetsAt)
          : error.retryAfterSeconds
            ? new Date(Date.now() + error.retryAfterSeconds * 1000)
            : undefined;
      const when =
        resetsAt && !Number.isNaN(resetsAt.getTime())
          ? ` They reset at ${resetsAt.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })} (${fromNow(resetsAt)}).`
          : '';
      return orgName
        ? `${orgName}'s credit pool, or your own daily cap in it, is used up for today.${when} An admin can raise your cap or buy more seats.`
        : `You have used up today's credits.${when} A bigger plan gives more credits per day.`;
    }
    if (
      error.code === 'rate_limited' ||
      (error.status === 429 && error.retryAfterSeconds)
    ) {
      return `Too many requests right now. Try again in ${error.retryAfterSeconds ?? 1} s.`;
    }
    if (
      ['provider_error', 'provider_timeout', 'generation_interrupted'].includes(
        error.code,
      )
    ) {
      return `${error.message.replace(/\s*Send a new idempotencyKey to try again\.?/, '')} You can send it again.`;
    }
  }
  return describeFailure(error);
}

function fromNow(date: Date): string {
  const minutes = Math.max(
    1,
    Math.round((date.getTime() - Date.now()) / 60_000),
  );
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return `in ${hours} h ${minutes % 60} min`;
}

function turnsOf(messages: ConversationMessage[]): Turn[] {
  return messages
    .filter((message) => message.role !== 'system')
    .map((message) => ({
      key: message.id,
      id: message.id,
      role: message.role as Turn['role'],
      text: message.content,
      usage: message.usage ?? undefined,
      files: message.files.map((file) => ({ id: file.id, name: file.name })),
      alternatives: message.alternatives,
      tools: message.toolCalls.map((call) => ({
        id: call.id,
        tool: call.tool,
        arguments: call.arguments,
        status: call.status,
        content: call.content,
      })),
      feedback: message.feedback,
    }));
}

/** The stored turns, keeping what only the stream said (stopped, failed) and the turns not stored. */
function merge(stored: Turn[], local: Turn[]): Turn[] {
  const merged = stored.map((turn, index) => {
    const mine = local[index];
    if (!mine || mine.role !== turn.role) return turn;
    return {
      ...turn,
      usage: turn.usage ?? mine.usage,
      stopped: mine.stopped,
      failure: mine.failure,
      text: turn.text || mine.text,
      tools: turn.tools?.length ? turn.tools : mine.tools,
    };
  });
  return [...merged, ...local.slice(stored.length)];
}

const CONVERSATION_PATH = /^\/conversations\/([^/]+)\/?$/;

/**
 * One conversation: a new one, or an existing one opened at /conversations/{id}. A model picker limited to
 * the plan's models, files to attach, the answer streaming in, stop, usage, regenerate and edit.
 */
export function ChatScreen({ user, refreshUser }: ScreenProps) {
  const path = usePath();
  // With an organization chosen, its pool pays for new messages and its plan decides the models.
  const { current: org, ready: orgsReady } = useOrgs();
  const planCode = org ? org.plan.code : user.plan.code;
  const routeId = CONVERSATION_PATH.exec(path)?.[1];
  // The payment providers send the person back to /billing/success or /billing/canceled (shown here, the default screen).
  const billingReturn =
    path === '/billing/success'
      ? 'success'
      : path === '/billing/canceled'
        ? 'canceled'
        : null;
  const [models, setModels] = useState<Plan['models']>([]);
  const [model, setModel] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState('');
  const [conversationId, setConversationId] = useState<string | undefined>(
    routeId,
  );
  const [title, setTitle] = useState<string | undefined>();
  const [share, setShare] = useState<Share | null>(null);
  const [loading, setLoading] = useState(Boolean(routeId));
  const [error, setError] = useState<unknown>(null);
  const running = useRef<{ key: string; abort: AbortController } | null>(null);
  const [busy, setBusy] = useState(false);
  const [files, setFiles] = useState<FileItem[] | null>(null);
  const [attached, setAttached] = useState<string[]>([]);
  const [editing, setEditing] = useState<{ key: string; text: string } | null>(
    null,
  );
  const [tools, setTools] = useState<ToolInfo[] | null>(null);
  const [toolIds, setToolIds] = useState<string[]>([]);

  useEffect(() => {
    void api
      .GET('/v1/tools')
      .then((result) => setTools(unwrap(result).data))
      .catch(setError);
  }, []);
  const offered = toolIds.length ? { tools: toolIds } : {};

  useEffect(() => {
    if (!orgsReady) return;
    void (async () => {
      try {
        const plans = unwrap(await api.GET('/v1/plans')).data;
        const mine = plans.find((plan) => plan.code === planCode)?.models ?? [];
        setModels(mine);
        setModel((current) =>
          current && mine.some((option) => option.id === current)
            ? current
            : mine[0]?.id || '',
        );
      } catch (failure) {
        setError(failure);
      }
    })();
  }, [planCode, orgsReady]);

  const load = useCallback(async (id: string, local?: Turn[]) => {
    const conversation = unwrap(
      await api.GET('/v1/conversations/{id}', { params: { path: { id } } }),
    );
    setTitle(conversation.title);
    setShare(conversation.share);
    const stored = turnsOf(conversation.messages);
    setTurns(local ? merge(stored, local) : stored);
  }, []);

  useEffect(() => {
    if (!routeId) return;
    void (async () => {
      try {
        await load(routeId);
      } catch (failure) {
        setError(failure);
      } finally {
        setLoading(false);
      }
    })();
  }, [routeId, load]);

  useEffect(() => {
    if (billingReturn !== 'success') return;
    // The provider's webhook changes the plan; read the person (and the quota) again once it had a moment.
    const timer = setTimeout(
      () => void refreshUser().then(announceQuotaChanged),
      2000,
    );
    return () => clearTimeout(timer);
  }, [billingReturn, refreshUser]);

  const loadFiles = useCallback(
    () =>
      api
        .GET('/v1/files', { params: { query: { limit: 100 } } })
        .then((result) => setFiles(unwrap(result).data))
        .catch(setError),
    [],
  );
  useEffect(() => void loadFiles(), [loadFiles]);
  const readyFiles = (files ?? []).filter(
    (file) => file.text.status === 'ready',
  );

  /**
   * Streams one answer after `kept` (+ the new user turn). Answers false when it could not start (the
   * earlier turns are back and the failure is shown).
   */
  const run = async (
    start: (idempotencyKey: string) => TurnStart,
    kept: Turn[],
    userTurn?: Turn,
  ): Promise<boolean> => {
    const key = crypto.randomUUID();
    const abort = new AbortController();
    running.current = { key, abort };
    const previous = turns;
    let local: Turn[] = [
      ...kept,
      ...(userTurn ? [userTurn] : []),
      { key: `local-${key}`, role: 'assistant', text: '' },
    ];
    const update = (change: (turn: Turn) => Turn) => {
      local = [...local.slice(0, -1), change(local[local.length - 1])];
      setTurns(local);
    };
    setTurns(local);
    setBusy(true);
    setError(null);
    let id = conversationId;
    let started = false;
    try {
      for await (const chatEvent of streamTurn(start(key), abort.signal)) {
        started = true;
        if (chatEvent.type === 'meta') {
          id = chatEvent.conversationId;
          setConversationId(id);
        } else if (chatEvent.type === 'delta')
          update((turn) => ({ ...turn, text: turn.text + chatEvent.text }));
        else if (
          chatEvent.type === 'tool_call' ||
          chatEvent.type === 'tool_approval' ||
          chatEvent.type === 'tool_result'
        )
          update((turn) => ({
            ...turn,
            tools: withToolEvent(turn.tools ?? [], chatEvent),
          }));
        else if (chatEvent.type === 'usage')
          update((turn) => ({ ...turn, usage: chatEvent.usage }));
        else if (chatEvent.type === 'error')
          update((turn) => ({ ...turn, failure: chatEvent.message }));
        else if (chatEvent.type === 'done' && chatEvent.status === 'stopped')
          update((turn) => ({ ...turn, stopped: true }));
      }
    } catch (failure) {
      if (!abort.signal.aborted) {
        if (!started) setTurns(previous);
        else
          update((turn) => ({
            ...turn,
            failure: describeChatFailure(failure, org?.name),
          }));
        if (!started) setError(failure);
      }
    } finally {
      running.current = null;
    }
    announceQuotaChanged();
    if (started && id) {
      try {
        await load(id, local);
      } catch {
        // The answer is on screen; the ids for edit come with the next successful load.
      }
    }
    setBusy(false);
    return started;
  };

  const send = async (event: FormEvent) => {
    event.preventDefault();
    const content = draft.trim();
    if (!content || busy) return;
    const fileIds = attached;
    const names = readyFiles
      .filter((file) => fileIds.includes(file.id))
      .map((file) => ({ id: file.id, name: file.name }));
    setDraft('');
    setAttached([]);
    const ok = await run(
      (idempotencyKey) => ({
        kind: 'chat',
        body: {
          model,
          idempotencyKey,
          conversationId,
          messages: [{ role: 'user', content }],
          ...(fileIds.length ? { fileIds } : {}),
          ...offered,
          ...(org ? { organizationId: org.id } : {}),
        },
      }),
      turns,
      {
        key: `local-user-${crypto.randomUUID()}`,
        role: 'user',
        text: content,
        files: names,
      },
    );
    if (!ok) {
      setDraft((current) => current || content);
      setAttached((current) => (current.length ? current : fileIds));
    }
  };

  const regenerate = (index: number) => {
    if (!conversationId || busy) return;
    const id = conversationId;
    void run(
      (idempotencyKey) => ({
        kind: 'regenerate',
        conversationId: id,
        body: {
          idempotencyKey,
          ...(model ? { model } : {}),
          ...offered,
          ...(org ? { organizationId: org.id } : {}),
        },
      }),
      turns.slice(0, index),
    );
  };

  const saveEdit = (event: FormEvent, index: number) => {
    event.preventDefault();
    const turn = turns[index];
    const content = editing?.text.trim() ?? '';
    if (!conversationId || !turn?.id || !content || busy) return;
    const id = conversationId;
    const messageId = turn.id;
    setEditing(null);
    void run(
      (idempotencyKey) => ({
        kind: 'edit',
        conversationId: id,
        messageId,
        body: {
          idempotencyKey,
          content,
          ...(model ? { model } : {}),
          ...offered,
          ...(org ? { organizationId: org.id } : {}),
        },
      }),
      turns.slice(0, index),
      {
        key: `local-user-${crypto.randomUUID()}`,
        role: 'user',
        text: content,
        files: turn.files,
      },
    );
  };

  /** Shows another version of a message (an earlier answer, or the message before an edit). */
  const switchTo = async (messageId: string) => {
    if (!conversationId || busy) return;
    setError(null);
    try {
      unwrap(
        await api.PATCH('/v1/conversations/{id}', {
          params: { path: { id: conversationId } },
          body: { currentMessageId: messageId },
        }),
      );
      await load(conversationId);
    } catch (failure) {
      setError(failure);
    }
  };

  /** Approves or denies a call the running answer waits on; the answer goes on by itself. */
  const decide = async (call: ToolView, decision: 'approve' | 'deny') => {
    if (!call.approval) return;
    const approvalId = call.approval.approvalId;
    try {
      unwrap(
        await api.POST('/v1/chat/approvals/{approvalId}', {
          params: { path: { approvalId } },
          body: { decision },
        }),
      );
      setTurns((current) =>
        current.map((turn) => ({
          ...turn,
          tools: turn.tools?.map((tool) =>
            tool.approval?.approvalId === approvalId
              ? { ...tool, approval: { ...tool.approval, decided: decision } }
              : tool,
          ),
        })),
      );
    } catch (failure) {
      setError(failure);
    }
  };

  /** Stops the generation on whichever instance runs it; the stream then ends with what was written. */
  const stop = async () => {
    const current = running.current;
    if (!current) return;
    try {
      unwrap(
        await api.POST('/v1/chat/stop', {
          body: { idempotencyKey: current.key },
        }),
      );
    } catch (failure) {
      setError(failure);
    }
  };

  const startNew = () => {
    if (routeId) {
      navigate('/');
      return;
    }
    setTurns([]);
    setConversationId(undefined);
    setTitle(undefined);
    setShare(null);
    setError(null);
  };

  const lastAssistant = turns.map((turn) => turn.role).lastIndexOf('assistant');

  return (
    <section className="chat" aria-labelledby="chat-title">
      <h1 id="chat-title" className={title ? 'chat-title' : 'visually-hidden'}>
        {title ?? 'Chat'}
      </h1>
      {billingReturn === 'success' ? (
        <Notice kind="info">
          Thank you: the payment is being confirmed, and your new plan applies
          as soon as the provider tells us.{' '}
          <RouteLink to="/plans">See your plan</RouteLink>
        </Notice>
      ) : billingReturn === 'canceled' ? (
        <Notice kind="info">
          The checkout was canceled and nothing was charged.{' '}
          <RouteLink to="/plans">Back to the plans</RouteLink>
        </Notice>
      ) : null}
      <div className="chat-controls">
        <label>
          Model
          <select
            value={model}
            onChange={(event) => setModel(event.target.value)}
            disabled={busy}
          >
            {models.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={startNew} disabled={busy}>
          New conversation
        </button>
      </div>
      <p className="chat-payer">
        {org ? (
          <>
            Billed to <strong>{org.name}</strong>’s credit pool.{' '}
            <RouteLink to="/organization">See the pool</RouteLink>
          </>
        ) : (
          'Billed to your own credits.'
        )}
      </p>
      {conversationId ? (
        <ShareControl
          key={conversationId}
          conversationId={conversationId}
          share={share}
          onChange={setShare}
          disabled={busy}
        />
      ) : null}
      {loading ? <p role="status">Loading the conversation…</p> : null}
      <ol className="turns" aria-live="polite" aria-label="Conversation">
        {turns.map((turn, index) => {
          const versions =
            turn.alternatives && turn.alternatives.length > 1 && turn.id
              ? turn.alternatives
              : null;
          const position = versions ? versions.indexOf(turn.id!) : -1;
          const isEditing = editing?.key === turn.key;
          return (
            <li key={turn.key} className={`turn turn-${turn.role}`}>
              <span className="role">
                {turn.role === 'user' ? 'You' : 'Assistant'}
              </span>
              <ToolCallList tools={turn.tools ?? []} onDecide={decide} />
              {isEditing ? (
                <form
                  className="edit-form"
                  onSubmit={(event) => saveEdit(event, index)}
                >
                  <label>
                    Edited message
                    <textarea
                      rows={3}
                      value={editing.text}
                      onChange={(event) =>
                        setEditing({ key: turn.key, text: event.target.value })
                      }
                      required
                    />
                  </label>
                  <div className="turn-actions">
                    <button
                      type="submit"
                      disabled={busy || !editing.text.trim()}
                    >
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
              ) : (
                <div className="text">
                  {turn.text ||
                    (turn.role === 'assistant' &&
                    busy &&
                    index === turns.length - 1
                      ? '…'
                      : '')}
                </div>
              )}
              {turn.files?.length ? (
                <p className="meta attached-files">
                  Attached: {turn.files.map((file) => file.name).join(', ')}
                </p>
              ) : null}
              {turn.failure ? (
                <Notice kind="error">{turn.failure}</Notice>
              ) : null}
              {turn.stopped ? <p className="meta">Stopped.</p> : null}
              {turn.usage ? (
                <p className="meta usage">
                  {turn.usage.inputTokens} tokens in · {turn.usage.outputTokens}{' '}
                  out · {turn.usage.credits} credits
                </p>
              ) : null}
              {turn.role === 'assistant' && turn.id && conversationId ? (
                <AnswerFeedback
                  key={turn.id}
                  conversationId={conversationId}
                  messageId={turn.id}
                  initial={turn.feedback ?? null}
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
                        onClick={() => void switchTo(versions[position - 1])}
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
                        onClick={() => void switchTo(versions[position + 1])}
                      >
                        ›
                      </button>
                    </span>
                  ) : null}
                  {turn.role === 'user' && turn.id ? (
                    <button
                      type="button"
                      className="secondary"
                      onClick={() =>
                        setEditing({ key: turn.key, text: turn.text })
                      }
                    >
                      Edit
                    </button>
                  ) : null}
                  {turn.role === 'assistant' && index === lastAssistant ? (
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => regenerate(index)}
                    >
                      Regenerate
                    </button>
                  ) : null}
                </div>
              ) : null}
            </li>
          );
        })}
      </ol>
      {error ? (
        <Notice kind="error">
          {describeChatFailure(error, org?.name)}
          {error instanceof ApiFailure && error.code === 'org_plan_required' ? (
            <>
              {' '}
              <RouteLink to="/organization">Open the organization</RouteLink>
            </>
          ) : null}
          {error instanceof ApiFailure &&
          error.code === 'quota_exceeded' &&
          !org ? (
            <>
              {' '}
              <RouteLink to="/plans">See the plans</RouteLink>
            </>
          ) : null}
        </Notice>
      ) : null}
      {error instanceof ApiFailure ? (
        <FieldErrors fields={error.fields} />
      ) : null}
      <form className="composer" onSubmit={(event) => void send(event)}>
        <label className="visually-hidden" htmlFor="message">
          Message
        </label>
        <textarea
          id="message"
          name="message"
          rows={3}
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          placeholder="Write a message"
          required
        />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={!model}>
            Send
          </button>
        )}
        <details
          className="attach"
          onToggle={(event) =>
            event.currentTarget.open ? void loadFiles() : undefined
          }
        >
          <summary>
            Attach files
            {attached.length ? ` (${attached.length} selected)` : ''}
          </summary>
          <fieldset>
            <legend className="visually-hidden">Attach files</legend>
            {files === null ? (
              <p className="meta">Loading your files…</p>
            ) : readyFiles.length === 0 ? (
              <p className="meta">
                No file with its text ready.{' '}
                <RouteLink to="/files">Upload one in Files</RouteLink>.
              </p>
            ) : (
              readyFiles.map((file) => (
                <label key={file.id} className="check">
                  <input
                    type="checkbox"
                    checked={attached.includes(file.id)}
                    disabled={
                      busy ||
                      (!attached.includes(file.id) && attached.length >= 10)
                    }
                    onChange={(event) =>
                      setAttached((current) =>
                        event.target.checked
                          ? [...current, file.id]
                          : current.filter((id) => id !== file.id),
                      )
                    }
                  />
                  {file.name}
                </label>
              ))
            )}
          </fieldset>
        </details>
        <ToolPicker
          available={tools}
          selected={toolIds}
          onChange={setToolIds}
          disabled={busy}
        />
      </form>
    </section>
  );
}
