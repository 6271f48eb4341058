import { AppError } from '../common/errors/app-error';
import { LiveBuffer } from './live/live-buffer';
import { FailureCode } from './live/live-event';

/** A started, joined or replayed answer, ready to be written to the client. */
export interface ChatStream {
  /** The run's id (the chat request's: its ledger entry names it). */
  runId: string;
  /** The catalog id of the model answering (a fallback, perhaps). */
  model: string;
  /** The model asked for, when it is not the one answering. */
  requestedModel?: string;
  conversationId: string;
  /** True for a retry: a replay of a finished request or a join of one still running. */
  replayed: boolean;
  /** The answer from its first byte; an end with `failed` after some text means it broke off. */
  answer: LiveBuffer;
  /** The attached files whose text went into the model's context (`x-context-files`). */
  contextFiles?: string[];
}

const FAILURE_DETAILS: Record<FailureCode, string> = {
  provider_error:
    'The model provider failed before answering; nothing was billed.',
  provider_timeout:
    'The model provider did not answer in time; nothing was billed.',
  generation_interrupted:
    'The answer was interrupted (the instance generating it stopped or lost its database) and nothing of it was stored; nothing was billed.',
  quota_exceeded:
    'The daily credits ran out before the answer could go on; nothing was billed.',
};

const MID_STREAM_DETAILS: Record<FailureCode, string> = {
  provider_error:
    'The model provider failed during the answer; only what was delivered is billed.',
  provider_timeout:
    'The model provider stopped answering in time; only what was delivered is billed.',
  generation_interrupted:
    'The answer was interrupted (the instance generating it stopped or lost its database).',
  quota_exceeded:
    'The daily credits ran out before the model could take its next step (after its tool calls); only what was used is billed.',
};

/** Why an answer broke off after its first byte (the `error` event). */
export function midStreamFailure(code: FailureCode): {
  code: FailureCode;
  detail: string;
} {
  return { code, detail: MID_STREAM_DETAILS[code] };
}

/** The problem for a run that failed before its first byte; its retries (same key) get the same one. */
export function failureProblem(code: FailureCode, replayed: boolean): AppError {
  return new AppError(
    code,
    `${FAILURE_DETAILS[code]} Send a new idempotencyKey to try again.`,
    {
      headers: replayed ? { 'Idempotent-Replayed': 'true' } : undefined,
    },
  );
}

/**
 * Waits for the answer's first text (or tool event) or its end, so that a failure before the first byte can still be a
 * 502 problem (nothing has been written yet). Resolves at once when the client has gone.
 */
export async function toChatStream(
  stream: ChatStream,
  signal?: AbortSignal,
): Promise<ChatStream> {
  const { answer, contextFiles, ...head } = stream;
  await firstEvent(answer, signal);
  const outcome = answer.ended;
  if (outcome?.status === 'failed' && nothingDelivered(answer))
    throw failureProblem(outcome.errorCode, stream.replayed);
  return { ...head, answer, ...(contextFiles?.length ? { contextFiles } : {}) };
}

/** Neither text nor a tool event: a failure now is a failure before the first byte. */
function nothingDelivered(answer: LiveBuffer): boolean {
  return answer.textSoFar() === '' && answer.toolEventsSoFar().length === 0;
}

function firstEvent(answer: LiveBuffer, signal?: AbortSignal): Promise<void> {
  if (answer.ended || !nothingDelivered(answer) || signal?.aborted)
    return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stop();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const stop = answer.subscribe({ text: done, tool: done, end: done });
    signal?.addEventListener('abort', done, { once: true });
  });
}
