import { Global, Inject, Module, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { AppLogger } from '../../common/logging/app-logger';

/** Injection token of the shared Redis connection, or null when REDIS_URL is unset (in-process stores). */
export const REDIS = Symbol('REDIS');
export type RedisClient = Redis;

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG, AppLogger],
      useFactory: (config: AppConfig, log: AppLogger): Redis | null => {
        if (!config.redis.url) {
          log.warn(
            {},
            'REDIS_URL is not set: rate limits and live streams use in-process stores (single instance only)',
          );
          return null;
        }
        const client = new Redis(config.redis.url, {
          keyPrefix: config.redis.keyPrefix,
          maxRetriesPerRequest: 2,
          connectTimeout: 5_000,
          commandTimeout: 5_000,
        });
        // One line when the connection is lost and one when it is back, not one per reconnection attempt.
        let lost = false;
        client.on('error', (error: Error) => {
          if (lost) return;
          lost = true;
          log.warn(
            { err: error },
            'redis connection error: retrying in the background',
          );
        });
        client.on('ready', () => {
          if (!lost) return;
          lost = false;
          log.info({}, 'redis connection restored');
        });
        return client;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnModuleDestroy {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  /** QUIT lets pending replies arrive; a connection that never became ready has nothing to wait for. */
  async onModuleDestroy(): Promise<void> {
    if (!this.redis) return;
    if (this.redis.status !== 'ready') return this.redis.disconnect();
    await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}
