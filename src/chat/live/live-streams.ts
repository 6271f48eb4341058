import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { REDIS, RedisClient } from '../../infra/redis/redis.module';
import { LiveBuffer } from './live-buffer';
import { IDLE_AFTER_MS, LiveEvent, RunOutcome } from './live-event';
import { RedisLiveStreams } from './redis-live-streams';
import { waitForWakeUp } from './wake-up';

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
    // Alive while the run can still append: a gap between chunks may last the provider timeout.
    const liveTtlMs = 2 * Math.max(config.chat.leaseMs, config.chat.providerTimeoutMs);
    this.remote = redis ? new RedisLiveStreams(redis, config.redis.keyPrefix, liveTtlMs, onError) : null;
  }

  open(runId: string): LiveWriter {
    const buffer = new LiveBuffer();
    this.local.set(runId, buffer);
    let offset = 0;
    return {
      append: (text) => {
        buffer.append(text);
        this.remote?.append(runId, offset, text);
        offset += text.length;
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

  /**
   * Every event of a run from its first chunk. A run of this process always ends its buffer (which never
   * ticks); otherwise `idle` ticks come while nothing is heard, and the caller asks the database whether
   * the run ended elsewhere.
   */
  follow(runId: string, signal?: AbortSignal): AsyncIterable<LiveEvent> {
    const buffer = this.local.get(runId);
    if (buffer) return buffer.follow(signal);
    return this.remote ? this.remote.follow(runId, signal) : idleTicks(signal);
  }

  async onModuleDestroy(): Promise<void> {
    await this.remote?.close();
  }
}

/** A run this process does not have and no relay can bring: only the database will tell how it ended. */
async function* idleTicks(signal?: AbortSignal): AsyncGenerator<LiveEvent> {
  while (!(await waitForWakeUp(new Set(), IDLE_AFTER_MS, signal)) && !signal?.aborted) yield { type: 'idle' };
}
