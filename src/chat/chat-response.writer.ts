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
  try {
    for await (const chunk of stream.chunks) {
      if (res.destroyed) return;
      res.write(chunk);
    }
    res.end();
  } catch {
    res.destroy();
  }
}
