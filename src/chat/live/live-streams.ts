import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { REDIS, RedisClient } from '../../infra/redis/redis.module';
import { LiveBuffer } from './live-buffer';
import { IDLE_AFTER_MS, LiveEvent, RunOutcome } from './live-event';
import { RedisLiveStreams } from './redis-live-streams';

/** A finished run's buffer stays a little for followers that found it running; later ones read the database. */
const LOCAL_RETENTION_MS = 30_000;

/** What a run writes its answer to: the in-process buffer and, with Redis, the shared stream. */
export interface LiveWriter {
  append(text: string): void;
  end(outcome: RunOutcome): Promise<void>;
  /** The claim did not happen: forget the run without telling anyone. */
  discard(): void;
}

/**
 * The live answers of running requests. Followers in this process read the run's own buffer; followers in
 * other instances read the Redis stream. Without Redis there is one instance, so the buffer is everything.
 */
@Injectable()
export class LiveStreams implements OnModuleDestroy {
  private readonly local = new Map<string, LiveBuffer>();
  private readonly remote: RedisLiveStreams | null;

  constructor(@Inject(REDIS) redis: RedisClient | null, @Inject(APP_CONFIG) config: AppConfig, private readonly log: AppLogger) {
    const onError = (error: unknown) => this.log.warn({ err: error }, 'live stream relay through redis failed');
    this.remote = redis ? new RedisLiveStreams(redis, config.redis.keyPrefix, config.chat.leaseMs * 2, onError) : null;
  }

  open(runId: string): LiveWriter {
    const buffer = new LiveBuffer();
    this.local.set(runId, buffer);
    return {
      append: (text) => {
        buffer.append(text);
        this.remote?.append(runId, text);
      },
      end: async (outcome) => {
        buffer.end(outcome);
        setTimeout(() => this.local.delete(runId), LOCAL_RETENTION_MS).unref();
        await this.remote?.end(runId, outcome);
      },
      discard: () => {
        this.local.delete(runId);
      },
    };
  }

  /** Every event of a run from its first chunk; `idle` ticks while nothing is heard (the caller checks the database). */
  follow(runId: string, signal?: AbortSignal): AsyncIterable<LiveEvent> {
    const buffer = this.local.get(runId);
    if (buffer) return buffer.follow(signal);
    if (this.remote) return this.remote.follow(runId, signal);
    return idleTicks(signal);
  }

  async onModuleDestroy(): Promise<void> {
    await this.remote?.close();
  }
}

/** A run this process does not have and no relay can bring: only the database will tell how it ended. */
async function* idleTicks(signal?: AbortSignal): AsyncGenerator<LiveEvent> {
  while (!signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, IDLE_AFTER_MS));
    yield { type: 'idle' };
  }
}
