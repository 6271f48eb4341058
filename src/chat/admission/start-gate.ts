/** Thrown when a start could not begin before its deadline (or its client left while it waited). */
export class StartRefused extends Error {
  constructor(readonly reason: 'deadline' | 'aborted') {
    super(`start refused: ${reason}`);
    this.name = 'StartRefused';
  }
}

interface Waiter {
  admit: () => void;
  refuse: (reason: 'deadline' | 'aborted') => void;
  done: boolean;
}

/**
 * At most `slots` starts at once, the others waiting in arrival order, each until its own deadline. Starts
 * do their database work inside a slot, so the pool is never queued on by more of them than it can serve,
 * and what cannot begin in time is refused at once instead of waiting for a connection for seconds.
 */
export class StartGate {
  private active = 0;
  private waitingCount = 0;
  /** Arrival order; entries before `head` were taken, refused ones are skipped when their turn comes. */
  private waiting: Waiter[] = [];
  private head = 0;

  constructor(private readonly slots: number) {}

  /** Starts now waiting for a slot. */
  get queued(): number {
    return this.waitingCount;
  }

  /**
   * Resolves with the function that frees the slot; rejects with StartRefused at `deadline` (a
   * `performance.now()` time) or when `signal` aborts first.
   */
  enter(deadline: number, now: number, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new StartRefused('aborted'));
    if (this.active < this.slots && this.queued === 0) return Promise.resolve(this.take());
    if (now >= deadline) return Promise.reject(new StartRefused('deadline'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        done: false,
        admit: () => {
          settle();
          resolve(this.take());
        },
        refuse: (reason) => {
          settle();
          reject(new StartRefused(reason));
        },
      };
      const timer = setTimeout(() => waiter.refuse('deadline'), deadline - now);
      const aborted = () => waiter.refuse('aborted');
      const settle = () => {
        waiter.done = true;
        this.waitingCount -= 1;
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
      };
      signal?.addEventListener('abort', aborted, { once: true });
      this.waiting.push(waiter);
      this.waitingCount += 1;
    });
  }

  private take(): () => void {
    this.active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.admitNext();
    };
  }

  private admitNext(): void {
    while (this.active < this.slots && this.head < this.waiting.length) {
      const next = this.waiting[this.head++];
      if (!next.done) next.admit();
    }
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    }
  }
}
