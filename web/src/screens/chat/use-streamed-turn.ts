import { useCallback, useEffect, useRef, useState } from 'react';
import type { ChatEvent, Usage } from '../../api/chat-stream';
import { api, unwrap } from '../../api/client';
import { announceQuotaChanged } from '../../api/quota-events';
import { withToolEvent, type ToolView } from '../ToolCalls';
import { describeChatFailure } from './chat-failure';

/** One answer as its events arrive. */
export interface StreamedAnswer {
  text: string;
  /** The tools it called, with their results (and an approval a call waits for). */
  tools: ToolView[];
  usage?: Usage;
  /** Why it broke off: an `error` event, or the stream failing after it began. */
  failure?: string;
  /** Stopped on request (Stop), with what was written until then. */
  stopped?: boolean;
}

export interface TurnOutcome {
  /** The stream began, so an answer (perhaps partial) exists. */
  started: boolean;
  /** Given up here (cancel(), or the component went away): nothing of it is to be shown. */
  canceled: boolean;
  answer: StreamedAnswer;
  /** The conversation the stream's `meta` event named. */
  conversationId?: string;
  /** Why it did not begin: a refusal before the first byte (quota, rate limit, a rejected input). */
  error?: unknown;
}

/** Opens the stream of one answer: the chat, regenerate, edit or Skill run route, with its idempotency key. */
export type OpenStream = (
  idempotencyKey: string,
  signal: AbortSignal,
) => AsyncIterable<ChatEvent>;

/** How often a streaming answer is drawn again, at most. */
const DRAW_EVERY_MS = 50;

interface Running {
  key: string;
  abort: AbortController;
  answer: StreamedAnswer;
}

/**
 * One streamed answer at a time (the chat screen's turns, the Skill run form): `start` reads its events into
 * `answer` until the stream ends, `stop` asks the service to stop it (on whichever instance runs it; the stream
 * then ends with what was written), `decide` answers a tool call's approval, `cancel` stops reading it here.
 * The stream is canceled when the component goes away.
 */
export function useStreamedTurn() {
  const [answer, setAnswer] = useState<StreamedAnswer | null>(null);
  const [streaming, setStreaming] = useState(false);
  const running = useRef<Running | null>(null);

  useEffect(
    () => () => {
      running.current?.abort.abort();
      running.current = null;
    },
    [],
  );

  const start = useCallback(
    async (
      open: OpenStream,
      options: {
        /** Called once the stream names its conversation (a new one gets its id here). */
        onMeta?: (conversationId: string) => void;
        /** The organization paying, for the words of a failure. */
        orgName?: string;
      } = {},
    ): Promise<TurnOutcome> => {
      running.current?.abort.abort();
      const run: Running = {
        key: crypto.randomUUID(),
        abort: new AbortController(),
        answer: { text: '', tools: [] },
      };
      running.current = run;
      const { signal } = run.abort;
      // Drawn at most once a frame-ish: a fast model sends far more deltas than anyone can read, and each
      // drawing renders the whole answer's Markdown again.
      let drawing: ReturnType<typeof setTimeout> | undefined;
      const draw = () => {
        drawing = undefined;
        if (!signal.aborted) setAnswer(run.answer);
      };
      const update = (change: (answer: StreamedAnswer) => StreamedAnswer) => {
        run.answer = change(run.answer);
        drawing ??= setTimeout(draw, DRAW_EVERY_MS);
      };
      setAnswer(run.answer);
      setStreaming(true);
      let started = false;
      let conversationId: string | undefined;
      let error: unknown;
      try {
        for await (const event of open(run.key, signal)) {
          if (signal.aborted) break;
          started = true;
          switch (event.type) {
            case 'meta':
              conversationId = event.conversationId;
              options.onMeta?.(event.conversationId);
              break;
            case 'delta':
              update((answer) => ({
                ...answer,
                text: answer.text + event.text,
              }));
              break;
            case 'tool_call':
            case 'tool_approval':
            case 'tool_result':
              update((answer) => ({
                ...answer,
                tools: withToolEvent(answer.tools, event),
              }));
              break;
            case 'usage':
              update((answer) => ({ ...answer, usage: event.usage }));
              break;
            case 'error':
              update((answer) => ({ ...answer, failure: event.message }));
              break;
            case 'done':
              if (event.status === 'stopped')
                update((answer) => ({ ...answer, stopped: true }));
              break;
          }
        }
      } catch (failure) {
        if (!signal.aborted) {
          if (started)
            update((answer) => ({
              ...answer,
              failure: describeChatFailure(failure, options.orgName),
            }));
          else error = failure;
        }
      } finally {
        if (drawing !== undefined) {
          clearTimeout(drawing);
          draw();
        }
        if (running.current === run) running.current = null;
        setStreaming(running.current !== null);
      }
      // The answer was billed (or refused): the credits left may have changed.
      announceQuotaChanged();
      const canceled = signal.aborted;
      if (!started && !canceled) setAnswer(null);
      return {
        started: started && !canceled,
        canceled,
        answer: run.answer,
        conversationId,
        error,
      };
    },
    [],
  );

  /** Asks the service to stop the running answer; a failure is thrown. */
  const stop = useCallback(async () => {
    const run = running.current;
    if (!run) return;
    unwrap(
      await api.POST('/v1/chat/stop', { body: { idempotencyKey: run.key } }),
    );
  }, []);

  /** Approves or denies a call the running answer waits on; the answer goes on by itself. A failure is thrown. */
  const decide = useCallback(
    async (call: ToolView, decision: 'approve' | 'deny') => {
      if (!call.approval) return;
      const { approvalId } = call.approval;
      const run = running.current;
      unwrap(
        await api.POST('/v1/chat/approvals/{approvalId}', {
          params: { path: { approvalId } },
          body: { decision },
        }),
      );
      if (!run || run.abort.signal.aborted) return;
      run.answer = {
        ...run.answer,
        tools: run.answer.tools.map((tool) =>
          tool.approval?.approvalId === approvalId
            ? { ...tool, approval: { ...tool.approval, decided: decision } }
            : tool,
        ),
      };
      setAnswer(run.answer);
    },
    [],
  );

  /** Stops reading the running answer here (the screen moved on); its `start` resolves as canceled. */
  const cancel = useCallback(() => {
    running.current?.abort.abort();
  }, []);

  return { answer, streaming, start, stop, decide, cancel };
}
