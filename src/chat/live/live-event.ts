import { ErrorCode } from '../../common/errors/error-codes';
import { ToolEvent } from '../../tools/run/tool-events';

/** What a settled run cost: its tokens and the credits billed (0 when nothing was billed). */
export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  credits: number;
  /** Of inputTokens, those read from the provider's prompt cache. */
  cachedInputTokens?: number;
  /** The model billed (the one that answered, a fallback perhaps); absent when nothing was billed. */
  model?: string;
}

/**
 * How a run ended: completed, stopped by POST /v1/chat/stop (the text so far is the answer), or failed
 * with the problem code a client sees (and a replay repeats); with its usage once settled.
 */
export type RunOutcome = (
  | { status: 'completed' | 'stopped' }
  | { status: 'failed'; errorCode: FailureCode }
) & { usage?: RunUsage };

export type RunStatus = RunOutcome['status'];

export type FailureCode = Extract<
  ErrorCode,
  | 'provider_error'
  | 'provider_timeout'
  | 'generation_interrupted'
  | 'quota_exceeded'
>;

/**
 * What a follower of a running answer sees: text in order from the first byte, then one end. Followers of a
 * run in another instance also get `idle` after each quiet second, to check the database (the run may have
 * ended where they cannot hear it).
 */
export type LiveEvent =
  | { type: 'text'; text: string }
  | { type: 'tool'; event: ToolEvent }
  | { type: 'end'; outcome: RunOutcome }
  | { type: 'idle' };

export const IDLE_AFTER_MS = 1_000;

export function isFailureCode(code: string | null): code is FailureCode {
  return (
    code === 'provider_error' ||
    code === 'provider_timeout' ||
    code === 'generation_interrupted' ||
    code === 'quota_exceeded'
  );
}

/**
 * Text and the tool events placed in it (each after `offset` characters), as the events a follower gets
 * in order: a live buffer replaying what it has, and a finished run rebuilt from the database alike.
 */
export function interleave(
  text: string,
  placed: readonly { offset: number; event: ToolEvent }[],
): Extract<LiveEvent, { type: 'text' | 'tool' }>[] {
  const events: Extract<LiveEvent, { type: 'text' | 'tool' }>[] = [];
  let sent = 0;
  for (const { offset, event } of placed) {
    const at = Math.min(offset, text.length);
    if (at > sent) events.push({ type: 'text', text: text.slice(sent, at) });
    sent = Math.max(sent, at);
    events.push({ type: 'tool', event });
  }
  if (text.length > sent) events.push({ type: 'text', text: text.slice(sent) });
  return events;
}
