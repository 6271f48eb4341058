import { Response } from 'express';
import { ChatStream } from './chat-stream';

/** Aborts when the client goes away before the answer was written, so followers stop reading for it. */
export function abortWhenClientLeaves(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Writes an answer as `text/plain` chunks, each as soon as it exists (no buffering on the way: no
 * compression, no proxy buffering). An answer that broke off ends the connection without the final chunk,
 * which clients see as an incomplete response rather than a clean end.
 */
export async function writeChatStream(res: Response, stream: ChatStream): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  res.setHeader('x-conversation-id', stream.conversationId);
  if (stream.replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.socket?.setNoDelay(true);
  res.flushHeaders();
  let written: Promise<void> = Promise.resolve();
  try {
    for await (const chunk of stream.chunks) {
      if (res.destroyed) return;
      written = new Promise((resolve) => res.write(chunk, () => resolve()));
    }
    res.end();
  } catch {
    // Destroying drops what is still buffered: let the delivered part reach the socket first.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([written, new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_BEFORE_ABORT_MS)))]);
    clearTimeout(timer);
    res.destroy();
  }
}

/** A client that stopped reading does not hold the connection open longer than this. */
const FLUSH_BEFORE_ABORT_MS = 5_000;
