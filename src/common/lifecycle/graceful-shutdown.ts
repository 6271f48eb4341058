import { Logger } from '../logging/logger';

type Step = { name: string; run: () => Promise<void> };

export interface ShutdownOptions {
  /** Ends the process; tests pass their own. */
  exit?: (code: number) => void;
  /** Whether SIGTERM, SIGINT and SIGHUP start the shutdown (default true). */
  handleSignals?: boolean;
}

/**
 * Signal handling of the process, installed before anything is started so a SIGTERM/SIGINT during
 * startup also stops what was already started (the embedded database). Steps run once each, in the
 * reverse order of registration: drain HTTP, close the app (pools), stop the embedded database.
 *
 * When they take longer than `timeoutMs`, the step still running is named in the log, `whenTimedOut`
 * cuts what holds it (open connections), and the remaining steps still run so the pools are closed;
 * the exit code is then 1. If the steps still have not finished after a second `timeoutMs`, the
 * process exits 1 without them.
 * docs/adr/0013-graceful-shutdown.md
 */
export class GracefulShutdown {
  private readonly steps: Step[] = [];
  private started = false;
  private timedOut = false;
  private current: string | undefined;
  private lastTimer: NodeJS.Timeout | undefined;
  private onTimeout: () => void = () => undefined;
  private readonly exit: (code: number) => void;

  constructor(
    private readonly log: Logger,
    private readonly timeoutMs: number,
    options: ShutdownOptions = {},
  ) {
    this.exit = options.exit ?? ((code) => process.exit(code));
    if (options.handleSignals === false) return;
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
      process.on(signal, () => void this.run(signal));
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
    // Not unref'd: a step waiting on nothing but a promise must not let the process end with code 0.
    const timer = setTimeout(() => this.timeOut(), this.timeoutMs);
    const failed = await this.runSteps();
    clearTimeout(timer);
    clearTimeout(this.lastTimer);
    const code = failed || this.timedOut ? 1 : exitCode;
    this.log.info(
      { exitCode: code },
      failed
        ? 'shutdown finished with errors'
        : this.timedOut
          ? 'shutdown finished late'
          : 'shutdown complete',
    );
    this.exit(code);
  }

  private timeOut(): void {
    this.timedOut = true;
    this.log.error(
      { step: this.current, timeoutMs: this.timeoutMs },
      `shutdown timed out in step "${this.current ?? 'none'}": cutting remaining connections`,
    );
    try {
      this.onTimeout();
    } catch (error) {
      this.log.error({ err: error }, 'cutting connections failed');
    }
    const last = setTimeout(() => {
      this.log.error(
        { step: this.current },
        `shutdown still stuck in step "${this.current ?? 'none'}": exiting without the remaining steps`,
      );
      this.exit(1);
    }, this.timeoutMs);
    this.lastTimer = last;
  }

  /** Runs each step once, even if an earlier one failed; answers whether any failed. */
  private async runSteps(): Promise<boolean> {
    let failed = false;
    for (let step = this.steps.shift(); step; step = this.steps.shift()) {
      this.current = step.name;
      try {
        await step.run();
      } catch (error) {
        failed = true;
        this.log.error({ step: step.name, err: error }, 'shutdown step failed');
      }
    }
    this.current = undefined;
    return failed;
  }
}
