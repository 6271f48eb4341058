import { Global, Inject, Module, OnModuleDestroy } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import Redis from 'ioredis';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { REDIS } from '../../infra/redis/redis.module';
import { AppLogger } from '../logging/app-logger';
import {
  FallbackRateLimitStore,
  MemoryRateLimitStore,
  RateLimitStore,
} from './rate-limit.store';
import { CounterThrottlerStorage, throttlerOptions } from './throttling';

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

/**
 * Rate limits with @nestjs/throttler: one named throttler per configured limit (RateLimitGuard is the
 * global guard, registered after the session guard in AuthModule so per-user limits know the user; it hands
 * routes with @RateLimit to AppThrottlerGuard).
 * Counters in Redis when configured (all instances enforce one limit; per instance while it is down), else
 * in this process.
 */
@Global()
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, RATE_LIMIT_STORE],
      useFactory: (config: AppConfig, counters: RateLimitStore) =>
        throttlerOptions(config, new CounterThrottlerStorage(counters)),
    }),
  ],
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [REDIS, AppLogger],
      useFactory: (redis: Redis | null, log: AppLogger): RateLimitStore =>
        redis
          ? new FallbackRateLimitStore(redis, log)
          : new MemoryRateLimitStore(),
    },
  ],
  exports: [RATE_LIMIT_STORE, ThrottlerModule],
})
export class RateLimitModule implements OnModuleDestroy {
  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
  ) {}

  onModuleDestroy(): void {
    this.store.close?.();
  }
}
