import { AppError } from '../common/errors/app-error';
import { FailureCode, LiveEvent } from './live/live-event';

/** A started, joined or replayed answer, ready to be written to the client. */
export interface ChatStream {
  conversationId: string;
  /** True for a retry: a replay of a finished request or a join of one still running. */
  replayed: boolean;
  /** The answer from its first byte; throws AnswerBrokenError when it broke off after some text. */
  chunks: AsyncIterable<string>;
}

/** The answer stopped after some text was sent: the client must see an abnormal end, not a clean one. */
export class AnswerBrokenError extends Error {
  constructor(readonly code: FailureCode) {
    super(`answer broken off: ${code}`);
    this.name = 'AnswerBrokenError';
  }
}

const FAILURE_DETAILS: Record<FailureCode, string> = {
  provider_error: 'The model provider failed before answering; nothing was billed.',
  provider_timeout: 'The model provider did not answer in time; nothing was billed.',
  generation_interrupted: 'The answer was interrupted before any of it was delivered; nothing was billed.',
};

/** The problem for a run that failed before its first byte; its retries (same key) get the same one. */
export function failureProblem(code: FailureCode, replayed: boolean): AppError {
  return new AppError(code, `${FAILURE_DETAILS[code]} Send a new idempotencyKey to try again.`, {
    headers: replayed ? { 'Idempotent-Replayed': 'true' } : undefined,
  });
}

/**
 * Waits for the first meaningful event so that a failure before the first byte can still be a 502
 * problem (nothing has been written yet), then hands over the rest as text chunks.
 */
export async function toChatStream(conversationId: string, replayed: boolean, events: AsyncIterable<LiveEvent>): Promise<ChatStream> {
  const iterator = events[Symbol.asyncIterator]();
  const first = await nextEvent(iterator);
  if (first?.type === 'end' && first.outcome.status === 'failed') {
    // Lets the follower release what it holds (a Redis subscription) before the problem is answered.
    await iterator.return?.();
    throw failureProblem(first.outcome.errorCode, replayed);
  }
  return { conversationId, replayed, chunks: chunksFrom(first, iterator) };
}

async function* chunksFrom(first: LiveEvent | undefined, iterator: AsyncIterator<LiveEvent>): AsyncGenerator<string> {
  try {
    let event = first;
    while (event) {
      if (event.type === 'text') yield event.text;
      else if (event.type === 'end') {
        if (event.outcome.status === 'failed') throw new AnswerBrokenError(event.outcome.errorCode);
        return;
      }
      event = await nextEvent(iterator);
    }
  } finally {
    await iterator.return?.();
  }
}

/** The next text or end; undefined when the events stop (the follower was aborted). */
async function nextEvent(iterator: AsyncIterator<LiveEvent>): Promise<LiveEvent | undefined> {
  for (;;) {
    const next = await iterator.next();
    if (next.done) return undefined;
    if (next.value.type !== 'idle') return next.value;
  }
}
