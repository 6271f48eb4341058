import { Request, Response } from 'express';
import { ChatStream, midStreamFailure } from './chat-stream';
import { ToolEvent } from '../tools/run/tool-events';
import { RunOutcome, RunUsage } from './live/live-event';

/** Aborts when the client goes away before the answer was written, so followers stop reading for it. */
export function abortWhenClientLeaves(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** A client that stopped reading does not hold the connection open longer than this. */
const FLUSH_BEFORE_ABORT_MS = 5_000;

const NO_USAGE: RunUsage = { inputTokens: 0, outputTokens: 0, credits: 0 };

/** The `usage` event: the ledger's figures, cached input tokens always present (0 when none). */
function usageEventOf(usage: RunUsage | undefined): RunUsage {
  const { cachedInputTokens, ...rest } = usage ?? NO_USAGE;
  return {
    inputTokens: rest.inputTokens,
    cachedInputTokens: cachedInputTokens ?? 0,
    outputTokens: rest.outputTokens,
    credits: rest.credits,
    ...(rest.model ? { model: rest.model } : {}),
  };
}

/** Server-sent events when the client asks for them (`Accept: text/event-stream`), else streamed plain text. */
export function writeAnswer(
  req: Request,
  res: Response,
  stream: ChatStream,
): Promise<void> {
  return wantsEvents(req)
    ? writeChatEvents(res, stream)
    : writeChatStream(res, stream);
}

/** The client asked for server-sent events (`Accept: text/event-stream`). */
export function wantsEvents(req: Request): boolean {
  return /(^|[\s,])text\/event-stream\s*(;|,|$)/i.test(
    req.headers.accept ?? '',
  );
}

/**
 * Writes an answer as `text/plain` chunks, each as soon as it exists (no buffering on the way: no
 * compression, no proxy buffering). An answer that broke off ends the connection without the final chunk,
 * which clients see as an incomplete response rather than a clean end; a stopped one ends cleanly. A
 * replay of a finished run says how it ended (`x-run-status`). Resolves when the response is done.
 */
export function writeChatStream(
  res: Response,
  stream: ChatStream,
): Promise<void> {
  writeHead(res, stream, 'text/plain; charset=utf-8');
  const ended = stream.answer.ended;
  if (stream.replayed && ended) res.setHeader('x-run-status', ended.status);
  return relay(res, stream, {
    text: (chunk) => res.write(chunk),
    end: (outcome) => endPlainText(res, outcome),
  });
}

/**
 * Writes an answer as server-sent events: `meta` (conversationId, requestId, model), one `delta` per
 * chunk of text, `tool_call` and `tool_result` among them in a run that uses tools, then `error` (code, detail) when it broke off, `usage` (tokens and credits billed) and
 * `done` (status). A replay or a joined run writes the same events. Resolves when the response is done.
 */
export function writeChatEvents(
  res: Response,
  stream: ChatStream,
): Promise<void> {
  writeHead(res, stream, 'text/event-stream; charset=utf-8');
  sendEvent(res, 'meta', {
    conversationId: stream.conversationId,
    requestId: stream.runId,
    model: stream.model,
    ...(stream.requestedModel && stream.requestedModel !== stream.model
      ? { requestedModel: stream.requestedModel }
      : {}),
  });
  return relay(res, stream, {
    text: (text) => sendEvent(res, 'delta', { text }),
    tool: ({ type, ...data }) => sendEvent(res, type, data),
    end: (outcome) => {
      if (outcome.status === 'failed')
        sendEvent(res, 'error', midStreamFailure(outcome.errorCode));
      sendEvent(res, 'usage', usageEventOf(outcome.usage));
      sendEvent(res, 'done', { status: outcome.status });
      res.end();
    },
  });
}

function writeHead(
  res: Response,
  stream: ChatStream,
  contentType: string,
): void {
  res.status(200);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  res.setHeader('x-conversation-id', stream.conversationId);
  if (stream.replayed) res.setHeader('Idempotent-Replayed', 'true');
  if (stream.contextFiles)
    res.setHeader('x-context-files', stream.contextFiles.join(','));
  res.socket?.setNoDelay(true);
}

function sendEvent(res: Response, event: string, data: object): void {
  // JSON.stringify escapes line breaks, so the data is one `data:` line.
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * Passes the answer to the writer until its end or until the client leaves. The first text (or the end)
 * is already there (toChatStream waited for it): the head goes out with it. Node corks the socket for each
 * chunk until the next tick, so chunks written in one tick share a write.
 */
function relay(
  res: Response,
  stream: ChatStream,
  write: {
    text: (chunk: string) => void;
    tool?: (event: ToolEvent) => void;
    end: (outcome: RunOutcome) => void;
  },
): Promise<void> {
  return new Promise((resolve) => {
    let finished = false;
    // Until subscribe returns there is nothing to stop: an end during subscribe is handled below it.
    let unsubscribe = (): void => {};
    const finish = () => {
      if (finished) return;
      finished = true;
      unsubscribe();
      res.off('close', finish);
      resolve();
    };
    res.on('close', finish);
    const stop = stream.answer.subscribe({
      text: (chunk) => {
        if (!res.destroyed) write.text(chunk);
      },
      tool: (event) => {
        if (!res.destroyed) write.tool?.(event);
      },
      end: (outcome) => {
        if (!res.destroyed) write.end(outcome);
        finish();
      },
    });
    if (finished) stop();
    else unsubscribe = stop;
  });
}

function endPlainText(res: Response, outcome: RunOutcome): void {
  if (outcome.status !== 'failed') {
    res.end();
    return;
  }
  // Broken off: close the connection without the final chunk, after what was delivered reaches the client
  // (end() flushes first, destroy() would drop it), and no later than FLUSH_BEFORE_ABORT_MS.
  const socket = res.socket;
  if (!socket) return;
  socket.end();
  setTimeout(() => socket.destroy(), FLUSH_BEFORE_ABORT_MS).unref();
}
