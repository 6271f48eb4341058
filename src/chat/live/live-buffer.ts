import { IDLE_AFTER_MS, LiveEvent, RunOutcome } from './live-event';

/**
 * The answer of one run in this process, kept whole while it is produced: any number of followers read it
 * from the first chunk and wait for more. The run appends; followers never block the run.
 */
export class LiveBuffer {
  private readonly chunks: string[] = [];
  private outcome: RunOutcome | undefined;
  private wakeUps = new Set<() => void>();

  append(text: string): void {
    this.chunks.push(text);
    this.wakeAll();
  }

  end(outcome: RunOutcome): void {
    this.outcome = outcome;
    this.wakeAll();
  }

  get ended(): boolean {
    return this.outcome !== undefined;
  }

  async *follow(signal?: AbortSignal): AsyncGenerator<LiveEvent> {
    let next = 0;
    while (!signal?.aborted) {
      while (next < this.chunks.length) yield { type: 'text', text: this.chunks[next++] };
      if (this.outcome) {
        yield { type: 'end', outcome: this.outcome };
        return;
      }
      const woken = await this.waitForChange(signal);
      if (!woken) yield { type: 'idle' };
    }
  }

  /** True when something was appended or the run ended; false after a quiet IDLE_AFTER_MS or an abort. */
  private waitForChange(signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (woken: boolean) => {
        clearTimeout(timer);
        this.wakeUps.delete(wake);
        signal?.removeEventListener('abort', aborted);
        resolve(woken);
      };
      const wake = () => finish(true);
      const aborted = () => finish(false);
      const timer = setTimeout(() => finish(false), IDLE_AFTER_MS);
      this.wakeUps.add(wake);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  private wakeAll(): void {
    const wakeUps = [...this.wakeUps];
    this.wakeUps = new Set();
    for (const wake of wakeUps) wake();
  }
}
