import { Injectable } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { RunStore } from '../run-store';
import { ToolExecutionsRepository } from '../../tools/run/tool-executions.repository';
import { StoredRun } from '../chat-requests.repository';
import { outcomeOf, storedAnswer, storedEvents } from '../stored-run';
import { LiveBuffer } from './live-buffer';
import { LiveEvent } from './live-event';
import { LiveStreams } from './live-streams';

/** A follower of a quiet remote run asks the database after 1, 2, 4, 8, then every 8 seconds. */
const MAX_SECONDS_BETWEEN_CHECKS = 8;

/**
 * Following a run that is still streaming, for a retry that joins it: from the run's own buffer when it
 * runs on this instance, else relayed from the instance generating it (through Redis), with the database
 * as the judge of how it ended when the relay goes quiet.
 * docs/adr/0033-live-streams-through-redis.md
 */
@Injectable()
export class RemoteRunFollower {
  constructor(
    private readonly live: LiveStreams,
    private readonly store: RunStore,
    private readonly executions: ToolExecutionsRepository,
    private readonly log: AppLogger,
  ) {}

  /** The running answer from its first byte. */
  /**
   * The model answering a run, as its row says now: the router writes a fallback there before calling it,
   * so once the answer's first text exists the row names the model that wrote it.
   */
  async answeringModelOf(
    runId: string,
  ): Promise<{ model: string; requestedModel?: string } | undefined> {
    const stored = await this.store.findOutcome(runId);
    if (!stored) return undefined;
    return {
      model: stored.modelId,
      ...(stored.requestedModelId
        ? { requestedModel: stored.requestedModelId }
        : {}),
    };
  }

  answerOf(runId: string, signal?: AbortSignal): LiveBuffer {
    const local = this.live.localAnswer(runId);
    if (local) return local;
    const answer = new LiveBuffer();
    void this.relayInto(answer, this.followElsewhere(runId, signal));
    return answer;
  }

  /** A finished run's answer from the database: its text with its tool events among it, then its end. */
  async finishedAnswerOf(
    request: StoredRun,
    mayHaveCalledTools: boolean,
  ): Promise<LiveBuffer> {
    const toolCalls = mayHaveCalledTools
      ? ((await this.executions.ofRuns([request.id])).get(request.id) ?? [])
      : [];
    return storedAnswer(request, toolCalls);
  }

  private async relayInto(
    answer: LiveBuffer,
    events: AsyncIterable<LiveEvent>,
  ): Promise<void> {
    try {
      for await (const event of events) {
        if (event.type === 'text') answer.append(event.text);
        else if (event.type === 'tool') answer.tool(event.event);
        else if (event.type === 'end') answer.end(event.outcome);
      }
    } catch (error) {
      this.log.warn(
        { err: error },
        'following a run of another instance failed',
      );
      answer.end({ status: 'failed', errorCode: 'generation_interrupted' });
    }
  }

  /**
   * A run of another instance, from its first byte. That instance may end the run where this process
   * cannot hear it (it crashed and was swept, the relay lost a chunk): while the relay is quiet the
   * database is asked, less and less often, and a finished run is completed from the stored body.
   */
  private async *followElsewhere(
    runId: string,
    signal?: AbortSignal,
  ): AsyncGenerator<LiveEvent> {
    const delivered = { text: 0, tools: 0 };
    const checks = new QuietChecks();
    for await (const event of this.live.followElsewhere(runId, signal)) {
      if (event.type !== 'idle') {
        checks.reset();
        if (event.type === 'text') delivered.text += event.text.length;
        if (event.type === 'tool') delivered.tools += 1;
        yield event;
        if (event.type === 'end') return;
        continue;
      }
      if (!checks.dueAfterAQuietSecond()) continue;
      const ending = await this.endingFromDatabase(runId, delivered);
      if (!ending) continue;
      yield* ending;
      return;
    }
  }

  /** The rest of the run and its end, once the database says it finished; null while it streams. */
  private async endingFromDatabase(
    runId: string,
    delivered: { text: number; tools: number },
  ): Promise<LiveEvent[] | null> {
    let stored;
    let toolCalls;
    try {
      stored = await this.store.findOutcome(runId);
      if (stored?.status === 'streaming') return null;
      toolCalls = (await this.executions.ofRuns([runId])).get(runId) ?? [];
    } catch (error) {
      this.log.warn({ err: error, runId }, 'could not read a followed run');
      return null;
    }
    const end: LiveEvent = {
      type: 'end',
      outcome: stored
        ? outcomeOf(stored)
        : { status: 'failed', errorCode: 'generation_interrupted' },
    };
    return [
      ...undelivered(
        storedEvents(stored?.responseBody ?? '', toolCalls),
        delivered,
      ),
      end,
    ];
  }
}

/** The events after the first `delivered.text` characters and `delivered.tools` tool events. */
function undelivered(
  events: LiveEvent[],
  delivered: { text: number; tools: number },
): LiveEvent[] {
  let text = delivered.text;
  let tools = delivered.tools;
  const rest: LiveEvent[] = [];
  for (const event of events) {
    if (event.type === 'text') {
      if (text >= event.text.length) text -= event.text.length;
      else {
        rest.push({ type: 'text', text: event.text.slice(text) });
        text = 0;
      }
    } else if (event.type === 'tool' && tools > 0) tools -= 1;
    else rest.push(event);
  }
  return rest;
}

/** When a quiet relay is checked: after 1, 2, 4, 8 quiet seconds, then every 8 (the count restarts on news). */
class QuietChecks {
  private quietSeconds = 0;
  private nextCheck = 1;

  dueAfterAQuietSecond(): boolean {
    this.quietSeconds += 1;
    if (this.quietSeconds < this.nextCheck) return false;
    this.nextCheck =
      this.quietSeconds +
      Math.min(this.quietSeconds, MAX_SECONDS_BETWEEN_CHECKS);
    return true;
  }

  reset(): void {
    this.quietSeconds = 0;
    this.nextCheck = 1;
  }
}
