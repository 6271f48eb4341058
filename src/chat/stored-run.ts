import { StoredRun } from './chat-requests.repository';
import { LiveBuffer } from './live/live-buffer';
import { eventsOf, RecordedToolCall } from '../tools/run/tool-events';
import {
  interleave,
  isFailureCode,
  LiveEvent,
  RunOutcome,
  RunUsage,
} from './live/live-event';

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

/** A finished request replayed: its stored text with its tool events among it, then how it ended. */
export function storedAnswer(
  request: StoredRun,
  toolCalls: RecordedToolCall[] = [],
): LiveBuffer {
  const answer = new LiveBuffer();
  for (const event of storedEvents(request.responseBody ?? '', toolCalls))
    if (event.type === 'text') answer.append(event.text);
    else if (event.type === 'tool') answer.tool(event.event);
  answer.end(outcomeOf(request));
  return answer;
}

/** The stored text cut at the places of the tool events, in the order a live run sent them. */
export function storedEvents(
  text: string,
  toolCalls: RecordedToolCall[],
): LiveEvent[] {
  return interleave(text, eventsOf(toolCalls));
}
