import { Global, Inject, Module, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { REDIS } from '../../infra/redis/redis.module';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from './rate-limit.store';

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

/** Counters in Redis when configured (all instances enforce one limit), else in this process. */
@Global()
@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [REDIS],
      useFactory: (redis: Redis | null): RateLimitStore => (redis ? new RedisRateLimitStore(redis) : new MemoryRateLimitStore()),
    },
  ],
  exports: [RATE_LIMIT_STORE],
})
export class RateLimitModule implements OnModuleDestroy {
  constructor(@Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore) {}

  onModuleDestroy(): void {
    if (this.store instanceof MemoryRateLimitStore) this.store.close();
  }
}
