import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppLogger } from '../common/logging/app-logger';
import { BillingRepository } from './billing.repository';
import { SubscriptionsService } from './subscriptions.service';

const SWEEP_INTERVAL_MS = 60_000;
const BATCH = 100;

/**
 * Plans end on time even when no webhook says so: a subscription set to cancel at period end, or one whose
 * renewal stayed unpaid past the grace, stops granting its plan by the clock. Every instance checks the
 * candidates each minute; each release is a transaction under the subscription's lock, so it happens once.
 */
@Injectable()
export class BillingSweeperService implements OnModuleInit, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(
    private readonly billing: BillingRepository,
    private readonly subscriptions: SubscriptionsService,
    private readonly clock: Clock,
    private readonly log: AppLogger,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Returns the users whose plan was given up. */
  async sweep(): Promise<string[]> {
    if (this.sweeping) return [];
    this.sweeping = true;
    const released: string[] = [];
    try {
      for (const candidate of await this.billing.findPlanGrantsToCheck(this.clock.now(), BATCH)) {
        const subscriptionId = candidate.planSubscriptionId!;
        if (await this.billing.inTransaction((db) => this.subscriptions.releaseIfLapsed(db, subscriptionId))) released.push(candidate.id);
      }
      if (released.length > 0) this.log.info({ users: released }, 'plans whose subscription lapsed returned to Free');
    } catch (error) {
      this.log.warn({ err: error }, 'billing sweep failed');
    } finally {
      this.sweeping = false;
    }
    return released;
  }
}
