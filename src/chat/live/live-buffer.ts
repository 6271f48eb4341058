import { LiveEvent, RunOutcome } from './live-event';
import { waitForWakeUp } from './wake-up';

/**
 * The answer of one run in this process, kept whole while it is produced: any number of followers read it
 * from the first chunk and wait for more. The run appends; followers never block the run. The run always
 * ends its buffer (its provider call and settlement are both bounded), so followers need no other source.
 */
export class LiveBuffer {
  private readonly chunks: string[] = [];
  private outcome: RunOutcome | undefined;
  private readonly wakeUps = new Set<() => void>();

  append(text: string): void {
    this.chunks.push(text);
    this.wakeAll();
  }

  end(outcome: RunOutcome): void {
    this.outcome = outcome;
    this.wakeAll();
  }

  async *follow(signal?: AbortSignal): AsyncGenerator<LiveEvent> {
    let next = 0;
    while (!signal?.aborted) {
      while (next < this.chunks.length) yield { type: 'text', text: this.chunks[next++] };
      if (this.outcome) {
        yield { type: 'end', outcome: this.outcome };
        return;
      }
      await waitForWakeUp(this.wakeUps, undefined, signal);
    }
  }

  private wakeAll(): void {
    for (const wake of [...this.wakeUps]) wake();
  }
}
