import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/clock';
import { PeriodicTask } from '../common/lifecycle/periodic-task';
import { AppLogger } from '../common/logging/app-logger';
import { BillingRepository } from './billing.repository';
import { SubscriptionsService } from './subscriptions.service';

const SWEEP_INTERVAL_MS = 60_000;
const BATCH = 100;
/** At most this many batches per run; the next run goes on with the rest. */
const MAX_BATCHES = 50;

/**
 * Plans end on time even when no webhook says so: a subscription set to cancel at period end, or one whose
 * renewal stayed unpaid past the grace, stops granting its plan by the clock (`grantsUntil`). Every instance
 * looks each minute; each release is a transaction under the subscription's lock, so it happens once.
 */
@Injectable()
export class BillingSweeperService implements OnModuleInit, OnModuleDestroy {
  private readonly task = new PeriodicTask(
    () => this.sweepOnce(),
    [] as string[],
  );

  constructor(
    private readonly billing: BillingRepository,
    private readonly subscriptions: SubscriptionsService,
    private readonly clock: Clock,
    private readonly log: AppLogger,
  ) {}

  onModuleInit(): void {
    this.task.start(SWEEP_INTERVAL_MS);
  }

  onModuleDestroy(): void {
    this.task.stop();
  }

  /**
   * Returns the users and organizations (by id) whose plan changed. Works through every lapsed plan, oldest
   * first, a batch at a time.
   */
  sweep(): Promise<string[]> {
    return this.task.run();
  }

  private async sweepOnce(): Promise<string[]> {
    const released: string[] = [];
    try {
      for (let batch = 0; batch < MAX_BATCHES; batch += 1) {
        const lapsed = await this.billing.findLapsedPlanGrants(
          this.clock.now(),
          BATCH,
        );
        let progress = 0;
        for (const subscription of lapsed) {
          try {
            if (
              await this.billing.inTransaction((db) =>
                this.subscriptions.releaseIfLapsed(db, subscription.id),
              )
            )
              released.push(subscription.organizationId ?? subscription.userId);
            progress += 1;
          } catch (error) {
            // One row that keeps failing must not hold back the others.
            this.log.warn(
              { err: error, subscription: subscription.id },
              'lapsed plan could not be released; retried next sweep',
            );
          }
        }
        if (lapsed.length < BATCH || progress === 0) break;
      }
      if (released.length > 0)
        this.log.info(
          { released },
          'plans whose subscription lapsed were changed',
        );
    } catch (error) {
      this.log.warn({ err: error }, 'billing sweep failed');
    }
    return released;
  }
}
