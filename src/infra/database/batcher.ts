/** Why an item left the queue without being run. */
export class NotDispatched extends Error {
  constructor(readonly reason: 'deadline' | 'aborted') {
    super(`not dispatched: ${reason}`);
    this.name = 'NotDispatched';
  }
}

export interface BatcherOptions {
  /** Most items in one batch. */
  maxBatch: number;
  /** Most batches running at once; further items wait and go together in the next batch. */
  maxInFlight: number;
}

export interface SubmitOptions {
  /** performance.now() time after which a still waiting item is dropped (rejects with NotDispatched). */
  deadline?: number;
  /** A waiting item whose signal aborts is dropped (rejects with NotDispatched). */
  signal?: AbortSignal;
}

interface Entry<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
  timer?: NodeJS.Timeout;
  /** performance.now() when it was submitted. */
  since: number;
  /** Taken into a batch. */
  dispatched: boolean;
  /** Resolved, rejected or dropped: a dropped entry stays in the queue until its turn and is skipped then. */
  settled: boolean;
}

/**
 * Group commit in the application: items submitted while `maxInFlight` batches are running wait and leave
 * together (up to `maxBatch`) when one finishes, so under load one statement and one commit serve many
 * items, and without load an item leaves alone at once. A batch that fails is run again item by item, so
 * one bad item (or a deadlock between batches) fails only itself. Each item gets its own result.
 */
export class Batcher<I, R> {
  private queue: Entry<I, R>[] = [];
  private head = 0;
  private queued = 0;
  private inFlight = 0;

  constructor(
    private readonly runBatch: (items: I[]) => Promise<R[]>,
    private readonly options: BatcherOptions,
  ) {}

  /** Items waiting for a batch. */
  get waiting(): number {
    return this.queued;
  }

  /** How long the oldest item still waiting has waited (0 when none waits). */
  oldestWaitMs(now = performance.now()): number {
    if (this.queued === 0) return 0;
    for (let index = this.head; index < this.queue.length; index += 1) {
      const entry = this.queue[index];
      if (!entry.settled && !entry.dispatched) return now - entry.since;
    }
    return 0;
  }

  submit(item: I, options: SubmitOptions = {}): Promise<R> {
    if (options.signal?.aborted)
      return Promise.reject(new NotDispatched('aborted'));
    return new Promise<R>((resolve, reject) => {
      const entry: Entry<I, R> = {
        item,
        resolve,
        reject,
        since: performance.now(),
        dispatched: false,
        settled: false,
      };
      this.queue.push(entry);
      this.queued += 1;
      this.dispatch();
      if (entry.dispatched) return;
      const drop = (reason: 'deadline' | 'aborted') => {
        if (entry.dispatched || entry.settled) return;
        this.queued -= 1;
        settle(entry, () => reject(new NotDispatched(reason)));
      };
      if (options.deadline !== undefined)
        entry.timer = setTimeout(
          () => drop('deadline'),
          Math.max(0, options.deadline - performance.now()),
        );
      options.signal?.addEventListener('abort', () => drop('aborted'), {
        once: true,
      });
    });
  }

  private dispatch(): void {
    while (this.inFlight < this.options.maxInFlight && this.queued > 0) {
      const entries = this.take();
      this.inFlight += 1;
      void this.run(entries).finally(() => {
        this.inFlight -= 1;
        this.dispatch();
      });
    }
  }

  /** The next waiting entries in arrival order, up to maxBatch, skipping dropped ones. */
  private take(): Entry<I, R>[] {
    const entries: Entry<I, R>[] = [];
    while (
      entries.length < this.options.maxBatch &&
      this.head < this.queue.length
    ) {
      const entry = this.queue[this.head++];
      if (entry.settled) continue;
      entry.dispatched = true;
      clearTimeout(entry.timer);
      entries.push(entry);
    }
    this.queued -= entries.length;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    return entries;
  }

  private async run(entries: Entry<I, R>[]): Promise<void> {
    try {
      const results = await this.runBatch(entries.map((entry) => entry.item));
      entries.forEach((entry, index) =>
        settle(entry, () => entry.resolve(results[index])),
      );
    } catch (error) {
      if (entries.length === 1) {
        settle(entries[0], () => entries[0].reject(error));
        return;
      }
      // One of them (or a conflict with another batch) failed the whole statement: each on its own now.
      await Promise.all(
        entries.map(async (entry) => {
          try {
            const [result] = await this.runBatch([entry.item]);
            settle(entry, () => entry.resolve(result));
          } catch (itemError) {
            settle(entry, () => entry.reject(itemError));
          }
        }),
      );
    }
  }
}

function settle<I, R>(entry: Entry<I, R>, finish: () => void): void {
  if (entry.settled) return;
  entry.settled = true;
  clearTimeout(entry.timer);
  finish();
}
