import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { AppError } from '../common/errors/app-error';
import { DrainState } from '../common/lifecycle/drain-state';
import { AppLogger } from '../common/logging/app-logger';
import { REDIS } from '../infra/redis/redis.module';
import {
  ReadinessAdmissionDto,
  ReadinessChecksDto,
  ReadinessDto,
} from './dto/health.response';
import { ChatAdmission } from '../chat/admission/chat-admission';
import { withTimeout } from '../common/with-timeout';
import { HealthRepository } from './health.repository';

const CHECK_TIMEOUT_MS = 2_000;

@Injectable()
export class HealthService {
  constructor(
    private readonly health: HealthRepository,
    @Inject(REDIS) private readonly redis: Redis | null,
    private readonly log: AppLogger,
    private readonly drain: DrainState,
    private readonly admission: ChatAdmission,
  ) {}

  /** Ready when every configured dependency answers; otherwise 503 naming the ones down. */
  async readiness(): Promise<ReadinessDto> {
    if (this.drain.isDraining) {
      throw new AppError(
        'not_ready',
        'Shutting down: send new requests to another instance.',
        { headers: { 'Retry-After': '5' } },
      );
    }
    const [database, redis] = await Promise.all([
      this.check('database', () => this.health.pingDatabase()),
      this.redis
        ? this.check('redis', () => this.redis!.ping())
        : Promise.resolve('not_configured' as const),
    ]);
    const checks: ReadinessChecksDto = { database, redis };
    const admission = this.admissionNow();
    if (database === 'down') {
      throw new AppError('not_ready', 'Not ready: database unavailable.', {
        extensions: { checks, admission },
        headers: { 'Retry-After': '5' },
      });
    }
    // Without Redis the instance still serves everything (rate limits count per instance meanwhile):
    // it stays in the load balancer and says what is missing. Refusing new runs for load does not make
    // it unready either: its other routes and open streams are served, and pulling every busy instance
    // out of the balancer would turn a burst into an outage (docs/adr/0065).
    return {
      status: redis === 'down' ? 'degraded' : 'ok',
      checks,
      admission,
    };
  }

  private admissionNow(): ReadinessAdmissionDto {
    const state = this.admission.state();
    return {
      state: state.refusing ? 'refusing' : 'admitting',
      reason: state.refusing,
      openStreams: state.openStreams,
      startingRuns: state.startingRuns,
      startingLimit: state.startingLimit,
      eventLoopDelayMs: Math.round(state.eventLoopDelayMs),
      eventLoopUtilizationPercent:
        Math.round(state.eventLoopUtilization * 1000) / 10,
      memoryPercent: Math.round(state.memoryRatio * 1000) / 10,
      databaseWaitMs: Math.round(state.databaseWaitMs),
    };
  }

  private async check(
    name: string,
    probe: () => Promise<unknown>,
  ): Promise<'up' | 'down'> {
    try {
      await withTimeout(probe(), CHECK_TIMEOUT_MS, `${name} check timed out`);
      return 'up';
    } catch (error) {
      this.log.warn({ check: name, err: error }, 'readiness check failed');
      return 'down';
    }
  }
}
