import { ErrorCode } from '../../common/errors/error-codes';

/** How a run ended: completed, or failed with the problem code a client sees (and a replay repeats). */
export type RunOutcome = { status: 'completed' } | { status: 'failed'; errorCode: FailureCode };

export type FailureCode = Extract<ErrorCode, 'provider_error' | 'provider_timeout' | 'generation_interrupted'>;

/**
 * What a follower of a running answer sees: text in order from the first byte, then one end. Followers of a
 * run in another instance also get `idle` after each quiet second, to check the database (the run may have
 * ended where they cannot hear it).
 */
export type LiveEvent = { type: 'text'; text: string } | { type: 'end'; outcome: RunOutcome } | { type: 'idle' };

export const IDLE_AFTER_MS = 1_000;

export function isFailureCode(code: string | null): code is FailureCode {
  return code === 'provider_error' || code === 'provider_timeout' || code === 'generation_interrupted';
}
