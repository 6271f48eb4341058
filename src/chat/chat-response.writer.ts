import { Response } from 'express';
import { ChatStream } from './chat-stream';
import { RunOutcome } from './live/live-event';

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

/**
 * Writes an answer as `text/plain` chunks, each as soon as it exists (no buffering on the way: no
 * compression, no proxy buffering). An answer that broke off ends the connection without the final chunk,
 * which clients see as an incomplete response rather than a clean end. Resolves when the response is done.
 */
export function writeChatStream(res: Response, stream: ChatStream): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  res.setHeader('x-conversation-id', stream.conversationId);
  if (stream.replayed) res.setHeader('Idempotent-Replayed', 'true');
  if (stream.contextFiles) res.setHeader('x-context-files', stream.contextFiles.join(','));
  res.socket?.setNoDelay(true);
  // The first text (or the end) is already there (toChatStream waited for it): the head goes out with it.
  // Node corks the socket for each chunk until the next tick, so chunks written in one tick share a write.
  return new Promise((resolve) => {
    let finished = false;
    let stop: (() => void) | undefined;
    const finish = () => {
      if (finished) return;
      finished = true;
      stop?.();
      res.off('close', finish);
      resolve();
    };
    res.on('close', finish);
    stop = stream.answer.subscribe({
      text: (chunk) => {
        if (!res.destroyed) res.write(chunk);
      },
      end: (outcome) => {
        endResponse(res, outcome);
        finish();
      },
    });
    if (finished) stop();
  });
}

function endResponse(res: Response, outcome: RunOutcome): void {
  if (res.destroyed) return;
  if (outcome.status === 'completed') {
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
