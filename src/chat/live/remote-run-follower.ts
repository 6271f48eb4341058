import { Injectable } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { RunStore } from '../run-store';
import { outcomeOf } from '../stored-run';
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
    private readonly log: AppLogger,
  ) {}

  /** The running answer from its first byte. */
  answerOf(runId: string, signal?: AbortSignal): LiveBuffer {
    const local = this.live.localAnswer(runId);
    if (local) return local;
    const answer = new LiveBuffer();
    void this.relayInto(answer, this.followElsewhere(runId, signal));
    return answer;
  }

  private async relayInto(
    answer: LiveBuffer,
    events: AsyncIterable<LiveEvent>,
  ): Promise<void> {
    try {
      for await (const event of events) {
        if (event.type === 'text') answer.append(event.text);
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
    let delivered = 0;
    const checks = new QuietChecks();
    for await (const event of this.live.followElsewhere(runId, signal)) {
      if (event.type !== 'idle') {
        checks.reset();
        if (event.type === 'text') delivered += event.text.length;
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
    delivered: number,
  ): Promise<LiveEvent[] | null> {
    let stored;
    try {
      stored = await this.store.findOutcome(runId);
    } catch (error) {
      this.log.warn({ err: error, runId }, 'could not read a followed run');
      return null;
    }
    if (stored?.status === 'streaming') return null;
    const rest = (stored?.responseBody ?? '').slice(delivered);
    const end: LiveEvent = {
      type: 'end',
      outcome: stored
        ? outcomeOf(stored)
        : { status: 'failed', errorCode: 'generation_interrupted' },
    };
    return rest ? [{ type: 'text', text: rest }, end] : [end];
  }
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
