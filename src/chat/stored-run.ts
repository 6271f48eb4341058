import { StoredRun } from './chat-requests.repository';
import { LiveBuffer } from './live/live-buffer';
import { isFailureCode, RunOutcome, RunUsage } from './live/live-event';

/** What a run that billed nothing reports. */
export const NO_USAGE: RunUsage = {
  inputTokens: 0,
  outputTokens: 0,
  credits: 0,
};

/** How a finished run ended, as its stored row says. */
export function outcomeOf(request: StoredRun): RunOutcome {
  const usage = request.usage ?? NO_USAGE;
  if (request.status === 'completed' || request.status === 'stopped')
    return { status: request.status, usage };
  return {
    status: 'failed',
    errorCode: isFailureCode(request.errorCode)
      ? request.errorCode
      : 'generation_interrupted',
    usage,
  };
}

/** A finished request replayed: its stored text, then how it ended. */
export function storedAnswer(request: StoredRun): LiveBuffer {
  const answer = new LiveBuffer();
  if (request.responseBody) answer.append(request.responseBody);
  answer.end(outcomeOf(request));
  return answer;
}
