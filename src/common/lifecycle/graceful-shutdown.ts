import { Logger } from '../logging/logger';

type Step = { name: string; run: () => Promise<void> };

/**
 * Signal handling of the process, installed before anything is started so a SIGTERM/SIGINT during
 * startup also stops what was already started (the embedded database). Steps run in the reverse order
 * of registration: drain HTTP, close the app (pools), stop the embedded database. If they take longer
 * than `timeoutMs`, `onTimeout` cuts what is left and the process exits 1.
 */
export class GracefulShutdown {
  private readonly steps: Step[] = [];
  private started = false;
  private onTimeout: () => void = () => undefined;

  constructor(
    private readonly log: Logger,
    private readonly timeoutMs: number,
  ) {
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void this.run(signal));
  }

  /** Registers a step; the latest registered runs first. */
  add(name: string, run: () => Promise<void>): void {
    this.steps.unshift({ name, run });
  }

  whenTimedOut(cut: () => void): void {
    this.onTimeout = cut;
  }

  async run(reason: string, exitCode = 0): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.log.info({ reason }, 'shutting down: draining in-flight requests');
    const timer = setTimeout(() => {
      this.log.error({ timeoutMs: this.timeoutMs }, 'shutdown timed out: cutting remaining connections');
      this.onTimeout();
      void this.runSteps().finally(() => process.exit(1));
    }, this.timeoutMs);
    timer.unref();
    const failed = await this.runSteps();
    clearTimeout(timer);
    this.log.info({}, failed ? 'shutdown finished with errors' : 'shutdown complete');
    process.exit(failed ? 1 : exitCode);
  }

  /** Runs each step once, even if an earlier one failed; answers whether any failed. */
  private async runSteps(): Promise<boolean> {
    let failed = false;
    while (this.steps.length > 0) {
      const step = this.steps.shift()!;
      try {
        await step.run();
      } catch (error) {
        failed = true;
        this.log.error({ step: step.name, err: error }, 'shutdown step failed');
      }
    }
    return failed;
  }
}
