import { useQuery, useQueryClient } from '@tanstack/react-query';
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type FormEvent,
} from 'react';
import { useLocation, useRoute } from 'wouter';
import { api, unwrap } from '../api/client';
import { announceQuotaChanged } from '../api/quota-events';
import type { Share } from '../api/shares';
import { navigate } from '../navigation';
import { useOrgs } from '../org-context';
import { conversationQuery, modelsOf, queryKeys, usePlans } from '../queries';
import type { ScreenProps } from '../session';
import { RouteLink } from './AuthScreens';
import { ShareControl } from './ShareControl';
import type { ToolView } from './ToolCalls';
import { BillingReturn, ChatFailure } from './chat/ChatNotices';
import { Composer, type Outgoing } from './chat/Composer';
import {
  answerMessage,
  exchangesOf,
  merge,
  messagesOf,
  openTurn,
  type Message,
  type TurnStart,
} from './chat/messages';
import { preloadMarkdown } from './chat/AnswerText';
import { Turn, type TurnActions } from './chat/Turn';
import { useFollowScroll } from './chat/use-follow-scroll';
import { useStreamedTurn } from './chat/use-streamed-turn';
import './chat.css';

/** A query read again now, however recently it was read (after an answer, or a version switch). */
const freshly = <T extends object>(options: T): T => ({
  ...options,
  staleTime: 0,
});

/** The answer running now: the messages kept before it, the question it answers (if new), its local key. */
interface Pending {
  key: string;
  kept: Message[];
  question?: Message;
}

/**
 * One conversation: a new one at /, or an existing one at /conversations/{id} (a new one moves there as soon
 * as the stream names it, without starting over). A model picker limited to the plan's models, files to
 * attach, the answer streaming in (the page follows it unless the person scrolled up), stop, usage,
 * regenerate, edit and versions.
 */
export function ChatScreen({ user, refreshUser }: ScreenProps) {
  const [path] = useLocation();
  const [, params] = useRoute('/conversations/:id');
  const routeId = params?.id;
  const queryClient = useQueryClient();
  // With an organization chosen, its pool pays for new messages and its plan decides the models.
  const { current: org, ready: orgsReady } = useOrgs();
  const planCode = org ? org.plan.code : user.plan.code;
  // The payment providers send the person back to /billing/success or /billing/canceled (shown here, the default screen).
  const billingReturn =
    path === '/billing/success'
      ? 'success'
      : path === '/billing/canceled'
        ? 'canceled'
        : null;

  const plans = usePlans();
  const models = orgsReady ? modelsOf(plans.data, planCode) : [];
  const [chosenModel, setModel] = useState('');
  // The model chosen while the plan offers it, else the plan's first.
  const model = models.some((option) => option.id === chosenModel)
    ? chosenModel
    : (models[0]?.id ?? '');

  const [conversationId, setConversationId] = useState(routeId);
  const [error, setError] = useState<unknown>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  /** What only this page knows of the messages (stopped, failed, not stored), laid over the stored ones. */
  const [local, setLocal] = useState<Message[] | null>(null);
  const [editing, setEditing] = useState<TurnActions['editing']>(null);
  const [toolIds, setToolIds] = useState<string[]>([]);
  const turn = useStreamedTurn();
  const offered = toolIds.length ? { tools: toolIds } : {};

  // Another conversation in the address (the list, New chat, back): this one is left as it is. Its own id,
  // put in the address once the stream named it, is not another one.
  const [shownRoute, setShownRoute] = useState(routeId);
  const [visit, setVisit] = useState(0);
  if (routeId !== shownRoute) {
    setShownRoute(routeId);
    if (routeId !== conversationId) {
      setConversationId(routeId);
      setPending(null);
      setLocal(null);
      setError(null);
      setEditing(null);
      setVisit((current) => current + 1);
    }
  }
  // The answer streaming into the conversation left is no longer read; the next one starts at the top.
  const currentVisit = useRef(visit);
  const { cancel } = turn;
  useLayoutEffect(() => {
    currentVisit.current = visit;
    if (visit > 0) window.scrollTo(0, 0);
    return cancel;
  }, [visit, cancel]);
  // A new conversation gets its own address as soon as the stream names it.
  useEffect(() => {
    if (conversationId && !routeId)
      navigate(`/conversations/${conversationId}`, { replace: true });
  }, [conversationId, routeId]);

  const conversation = useQuery({
    ...conversationQuery(conversationId ?? ''),
    enabled: Boolean(conversationId) && !pending,
  });
  const stored = useMemo(
    () => (conversation.data ? messagesOf(conversation.data.messages) : []),
    [conversation.data],
  );
  const messages: Message[] = pending
    ? [
        ...pending.kept,
        ...(pending.question ? [pending.question] : []),
        ...(turn.answer ? [answerMessage(pending.key, turn.answer)] : []),
      ]
    : local
      ? merge(stored, local)
      : stored;
  const title = conversation.data?.title;
  const share = conversation.data?.share ?? null;
  const busy = pending !== null;
  const streaming = busy && turn.streaming;

  const list = useRef<HTMLOListElement>(null);
  const follow = useFollowScroll(list, streaming);

  // The Markdown renderer's chunk is fetched while the conversation loads.
  useEffect(preloadMarkdown, []);

  useEffect(() => {
    if (billingReturn !== 'success') return;
    // The provider's webhook changes the plan; read the person (and the quota) again once it had a moment.
    const timer = setTimeout(
      () => void refreshUser().then(announceQuotaChanged),
      2000,
    );
    return () => clearTimeout(timer);
  }, [billingReturn, refreshUser]);

  /**
   * Streams one answer after `kept` (+ the new question). Answers false when it could not start: the earlier
   * messages are back and the failure is shown (unless the person moved to another conversation meanwhile).
   */
  const run = async (
    request: (idempotencyKey: string) => TurnStart,
    kept: Message[],
    question?: Message,
  ): Promise<boolean> => {
    const visitAtStart = currentVisit.current;
    const key = `local-${crypto.randomUUID()}`;
    setPending({ key, kept, question });
    setError(null);
    follow.jump();
    const outcome = await turn.start(openTurn(request), {
      onMeta: setConversationId,
      orgName: org?.name,
    });
    // Its title is in the list once the first answer ends (or the person left it while it went on, the
    // service still answering); every answer moves its conversation up.
    const refreshList = () =>
      void queryClient.invalidateQueries({
        queryKey: queryKeys.conversationLists,
      });
    if (outcome.canceled || currentVisit.current !== visitAtStart) {
      refreshList();
      return true;
    }
    if (!outcome.started) {
      setPending(null);
      setError(outcome.error);
      return false;
    }
    refreshList();
    const id = outcome.conversationId ?? conversationId;
    if (id) {
      try {
        await queryClient.fetchQuery(freshly(conversationQuery(id)));
      } catch {
        // The answer is on screen; the ids for edit come with the next successful read.
      }
    }
    if (currentVisit.current !== visitAtStart) return true;
    setLocal([
      ...kept,
      ...(question ? [question] : []),
      answerMessage(key, outcome.answer),
    ]);
    setPending(null);
    return true;
  };

  const send = ({ content, files }: Outgoing) =>
    run(
      (idempotencyKey) => ({
        kind: 'chat',
        body: {
          model,
          idempotencyKey,
          conversationId,
          messages: [{ role: 'user', content }],
          ...(files.length ? { fileIds: files.map((file) => file.id) } : {}),
          ...offered,
          ...(org ? { organizationId: org.id } : {}),
        },
      }),
      messages,
      {
        key: `local-user-${crypto.randomUUID()}`,
        role: 'user',
        text: content,
        files,
      },
    );

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
      messages.slice(0, index),
    );
  };

  const saveEdit = (event: FormEvent, index: number) => {
    event.preventDefault();
    const message = messages[index];
    const content = editing?.text.trim() ?? '';
    if (!conversationId || !message?.id || !content || busy) return;
    const id = conversationId;
    const messageId = message.id;
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
      messages.slice(0, index),
      {
        key: `local-user-${crypto.randomUUID()}`,
        role: 'user',
        text: content,
        files: message.files,
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
      await queryClient.fetchQuery(freshly(conversationQuery(conversationId)));
      setLocal(null);
    } catch (failure) {
      setError(failure);
    }
  };

  const decide = (call: ToolView, decision: 'approve' | 'deny') =>
    turn.decide(call, decision).catch(setError);

  const stop = () => void turn.stop().catch(setError);

  const setShare = (next: Share | null) => {
    if (!conversationId) return;
    queryClient.setQueryData(
      queryKeys.conversation(conversationId),
      (current) => (current ? { ...current, share: next } : current),
    );
  };

  const startNew = () => {
    if (routeId) {
      navigate('/');
      return;
    }
    setConversationId(undefined);
    setLocal(null);
    setError(null);
  };

  const onComposerError = useCallback((failure: unknown) => {
    setError(failure);
  }, []);

  const lastAnswer = messages
    .map((message) => message.role)
    .lastIndexOf('assistant');
  const actions: TurnActions = {
    editing,
    setEditing,
    saveEdit,
    regenerate,
    switchTo: (messageId) => void switchTo(messageId),
    decide,
  };
  const shownError = error ?? conversation.error ?? plans.error;
  const loading =
    Boolean(conversationId) && conversation.isPending && !pending && !local;

  return (
    <section className="chat" aria-labelledby="chat-title">
      <h1 id="chat-title" className={title ? 'chat-title' : 'visually-hidden'}>
        {title ?? 'Chat'}
      </h1>
      {billingReturn ? <BillingReturn outcome={billingReturn} /> : null}
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
      <ol
        ref={list}
        className="turns"
        aria-live="polite"
        aria-label="Conversation"
      >
        {exchangesOf(messages).map((exchange) => (
          <Turn
            key={(exchange.question ?? exchange.answer)!.message.key}
            exchange={exchange}
            conversationId={conversationId}
            busy={busy}
            streaming={
              streaming && exchange.answer?.message.key === pending?.key
            }
            lastAnswerIndex={lastAnswer}
            actions={actions}
          />
        ))}
      </ol>
      {streaming && !follow.following ? (
        <button type="button" className="jump-latest" onClick={follow.jump}>
          Jump to latest
        </button>
      ) : null}
      {shownError ? (
        <ChatFailure error={shownError} orgName={org?.name} />
      ) : null}
      <Composer
        busy={busy}
        canSend={Boolean(model)}
        onSend={send}
        onStop={stop}
        onError={onComposerError}
        toolIds={toolIds}
        onToolsChange={setToolIds}
      />
    </section>
  );
}
