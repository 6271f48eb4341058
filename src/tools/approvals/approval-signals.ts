import { EventEmitter } from 'node:events';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { REDIS, RedisClient } from '../../infra/redis/redis.module';

/**
 * Tells the instance waiting on an approval that it was decided: at once in this process, through Redis
 * pub/sub to the others. A lost signal costs only time: the waiter reads the row every second anyway.
 */
@Injectable()
export class ApprovalSignals implements OnModuleDestroy {
  private readonly local = new EventEmitter();
  private subscriber: RedisClient | undefined;
  private closed = false;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient | null,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {
    this.local.setMaxListeners(0);
  }

  /** Announces a decision to every instance. */
  decided(approvalId: string): void {
    this.local.emit(approvalId);
    this.redis
      ?.publish(this.channel(), approvalId)
      .catch((error: unknown) => this.warn(error));
  }

  /** Calls `wake` when `approvalId` is decided; answers the function that stops listening. */
  listen(approvalId: string, wake: () => void): () => void {
    this.ensureSubscribed();
    this.local.on(approvalId, wake);
    return () => this.local.off(approvalId, wake);
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber)
      await subscriber.quit().catch(() => subscriber.disconnect());
  }

  private ensureSubscribed(): void {
    if (this.subscriber || this.closed || !this.redis) return;
    // No ready check: its INFO would be refused once the SUBSCRIBE (queued while connecting) is in.
    this.subscriber = this.redis.duplicate({ enableReadyCheck: false });
    this.subscriber.on('error', (error: unknown) => this.warn(error));
    this.subscriber.on('message', (_channel: string, approvalId: string) =>
      this.local.emit(approvalId),
    );
    this.subscriber
      .subscribe(this.channel())
      .catch((error: unknown) => this.warn(error));
  }

  private channel(): string {
    // ioredis prefixes keys but not pub/sub channels.
    return `${this.config.redis.keyPrefix}tool-approvals`;
  }

  private warn(error: unknown): void {
    this.log.warn({ err: error }, 'tool approval signal through redis failed');
  }
}
