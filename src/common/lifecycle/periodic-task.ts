/**
 * Runs `work` every `intervalMs` in the background (the timer never keeps the process alive) and never twice
 * at once: a call while one runs answers `idle`. The sweepers use it; their own `run()` stays callable.
 */
export class PeriodicTask<T> {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly work: () => Promise<T>,
    private readonly idle: T,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.run(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async run(): Promise<T> {
    if (this.running) return this.idle;
    this.running = true;
    try {
      return await this.work();
    } finally {
      this.running = false;
    }
  }
}
