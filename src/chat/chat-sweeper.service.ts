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
import { ToolExecutionsRepository } from '../tools/run/tool-executions.repository';
import { RunStore } from './run-store';
import { LeaseKeeper } from './lease-keeper';

/**
 * Crash safety: a run whose instance died stops renewing its lease. Every instance periodically fails such
 * runs and releases their reservations (one statement, so a run is swept once). Followers waiting on the
 * run see the failure through the database.
 * docs/adr/0029-leases-and-the-sweeper.md
 */
@Injectable()
export class ChatSweeperService implements OnModuleInit, OnModuleDestroy {
  private readonly task = new PeriodicTask(
    () => this.sweepOnce(),
    [] as string[],
  );

  constructor(
    private readonly runs: RunStore,
    private readonly leases: LeaseKeeper,
    private readonly toolExecutions: ToolExecutionsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  onModuleInit(): void {
    this.task.start(Math.max(250, Math.floor(this.config.chat.leaseMs / 2)));
  }

  onModuleDestroy(): void {
    this.task.stop();
  }

  /** Fails the expired runs; answers their ids. */
  sweep(): Promise<string[]> {
    return this.task.run();
  }

  private async sweepOnce(): Promise<string[]> {
    try {
      const swept = await this.runs.failExpiredRuns(this.leases.heldRuns());
      // A call that was out when its instance died may or may not have run: it is never run again.
      await this.toolExecutions.markOrphansUnknown();
      if (swept.length > 0)
        this.log.warn(
          { runs: swept },
          'failed chat runs whose lease expired and released their reservations',
        );
      return swept;
    } catch (error) {
      this.log.warn({ err: error }, 'chat sweep failed');
      return [];
    }
  }
}
