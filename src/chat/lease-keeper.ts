import {
  Inject,
  Injectable,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';
import { PeriodicTask } from '../common/lifecycle/periodic-task';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { RunStore } from './run-store';

/**
 * The leases of the runs this instance is generating. A claim starts a run's lease (CHAT_LEASE_MS, by the
 * database's clock, from the end of the claim); every quarter lease one statement extends the leases of
 * every run held here, so a renewal has three quarters of a lease to land. The sweeper of this instance
 * never fails a run held here, whatever its lease says; other instances' sweepers rely on the lease.
 * docs/adr/0029-leases-and-the-sweeper.md
 */
@Injectable()
export class LeaseKeeper implements OnModuleInit, OnModuleDestroy {
  private readonly held = new Set<string>();
  private stopRequested: (runIds: string[]) => void = () => undefined;
  private readonly task = new PeriodicTask(() => this.renewAll(), undefined);

  constructor(
    private readonly runs: RunStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  onModuleInit(): void {
    this.task.start(Math.floor(this.config.chat.leaseMs / 4));
  }

  onModuleDestroy(): void {
    this.task.stop();
  }

  /** Called with the held runs whose stop a renewal found asked for (when the message about it was lost). */
  onStopRequested(handler: (runIds: string[]) => void): void {
    this.stopRequested = handler;
  }

  /** From its claim until it is settled (or given up), the run's lease is kept alive. */
  hold(runId: string): void {
    this.held.add(runId);
  }

  release(runId: string): void {
    this.held.delete(runId);
  }

  /** The runs generated here now. */
  heldRuns(): string[] {
    return [...this.held];
  }

  /** Extends every held lease now (the timer calls it; tests may too). */
  renew(): Promise<void> {
    return this.task.run();
  }

  private async renewAll(): Promise<void> {
    if (this.held.size === 0) return;
    const runs = this.heldRuns();
    try {
      const toStop = await this.runs.renewLeases(
        runs,
        this.config.chat.leaseMs,
      );
      if (toStop.length > 0) this.stopRequested(toStop);
    } catch (error) {
      this.log.warn({ err: error, runs: runs.length }, 'lease renewal failed');
    }
  }
}
