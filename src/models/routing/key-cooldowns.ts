import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { REDIS, RedisClient } from '../../infra/redis/redis.module';

/**
 * A key that rests: its endpoint, its fingerprint, until when (epoch ms); with `model`, only for that
 * upstream model (rate limits are per model at most providers), else for every model of the endpoint.
 */
export interface Cooldown {
  endpoint: string;
  fingerprint: string;
  model?: string;
  until: number;
}

/**
 * Keys that answered 429 or 401 rest for a while, on every instance (docs/adr/0063): a cooldown is kept
 * here, written to Redis (`SET … PX`, read back at start) and announced by pub/sub, so the other
 * instances skip the key within milliseconds without a Redis call per request. Without Redis, or while it
 * is unreachable, each instance keeps its own (as the rate limits do).
 */
@Injectable()
export class KeyCooldowns implements OnModuleDestroy {
  private readonly until = new Map<string, number>();
  private subscriber: RedisClient | undefined;
  private closed = false;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient | null,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  /**
   * Until when the key rests for `model` (epoch ms): for every model, or for this one; undefined when it
   * may be used.
   */
  coolingUntil(
    endpoint: string,
    fingerprint: string,
    model?: string,
    now = Date.now(),
  ): number | undefined {
    const whole = this.running(nameOf(endpoint, fingerprint), now);
    const scoped =
      model === undefined
        ? undefined
        : this.running(nameOf(endpoint, fingerprint, model), now);
    if (whole === undefined) return scoped;
    return scoped === undefined ? whole : Math.max(whole, scoped);
  }

  /**
   * Rests the key for `ms` (for `model` only, when given) here at once, and on the other instances through
   * Redis.
   */
  coolDown(
    endpoint: string,
    fingerprint: string,
    ms: number,
    model?: string,
  ): void {
    const until = Date.now() + ms;
    const cooldown: Cooldown = {
      endpoint,
      fingerprint,
      until,
      ...(model === undefined ? {} : { model }),
    };
    this.remember(cooldown);
    if (!this.redis) return;
    const key = this.key(endpoint);
    this.redis
      .multi()
      .hset(key, fieldOf(fingerprint, model), String(until))
      // The hash outlives its longest cooldown; a field past its time is ignored when read.
      .pexpire(key, Math.max(ms, HASH_TTL_MS))
      .publish(this.channel(), JSON.stringify(cooldown))
      .exec()
      .catch((error: unknown) => this.warn(error));
  }

  private running(name: string, now: number): number | undefined {
    const until = this.until.get(name);
    if (until === undefined) return undefined;
    if (until > now) return until;
    this.until.delete(name);
    return undefined;
  }

  /**
   * Listens to the other instances' cooldowns and reads those still running of the endpoints of the keys
   * given (this instance's pools). Called once at start; cooldowns made later arrive by pub/sub.
   */
  async listen(
    keys: readonly { endpoint: string; fingerprint: string }[],
  ): Promise<void> {
    if (!this.redis || this.closed || this.subscriber) return;
    this.subscriber = this.redis.duplicate({ enableReadyCheck: false });
    this.subscriber.on('error', (error: unknown) => this.warn(error));
    this.subscriber.on('message', (_channel: string, text: string) =>
      this.heard(text),
    );
    this.subscriber
      .subscribe(this.channel())
      .catch((error: unknown) => this.warn(error));
    const endpoints = [...new Set(keys.map((key) => key.endpoint))];
    if (endpoints.length === 0) return;
    try {
      const pipeline = this.redis.pipeline();
      for (const endpoint of endpoints) pipeline.hgetall(this.key(endpoint));
      const results = (await pipeline.exec()) ?? [];
      results.forEach(([error, fields], index) => {
        if (error || typeof fields !== 'object' || fields === null) return;
        for (const [field, value] of Object.entries(fields)) {
          const until = Number(value);
          if (!Number.isFinite(until) || until <= Date.now()) continue;
          const [fingerprint, model] = field.split('\u0000');
          this.remember({
            endpoint: endpoints[index],
            fingerprint,
            until,
            ...(model ? { model } : {}),
          });
        }
      });
    } catch (error) {
      this.warn(error);
    }
  }

  /** Every key resting now, as this instance knows it (for GET /v1/admin/providers). */
  all(now = Date.now()): Cooldown[] {
    const cooldowns: Cooldown[] = [];
    for (const [name, until] of this.until) {
      if (until <= now) {
        this.until.delete(name);
        continue;
      }
      const [endpoint, fingerprint, model] = name.split('\u0000');
      cooldowns.push({
        endpoint,
        fingerprint,
        until,
        ...(model ? { model } : {}),
      });
    }
    return cooldowns;
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber)
      await subscriber.quit().catch(() => subscriber.disconnect());
  }

  private heard(text: string): void {
    try {
      const message = JSON.parse(text) as Partial<Cooldown>;
      if (
        typeof message.endpoint === 'string' &&
        typeof message.fingerprint === 'string' &&
        typeof message.until === 'number' &&
        (message.model === undefined || typeof message.model === 'string')
      )
        this.remember({
          endpoint: message.endpoint,
          fingerprint: message.fingerprint,
          until: message.until,
          ...(message.model === undefined ? {} : { model: message.model }),
        });
    } catch {
      // Not one of ours: ignored.
    }
  }

  /** The later of two cooldowns of one key (and model) wins. */
  private remember({ endpoint, fingerprint, model, until }: Cooldown): void {
    const name = nameOf(endpoint, fingerprint, model);
    if ((this.until.get(name) ?? 0) < until) this.until.set(name, until);
  }

  /** One hash per endpoint: a field per resting key (and model), its value until when. */
  private key(endpoint: string): string {
    return `provider-cooldowns:${endpoint}`;
  }

  private channel(): string {
    // ioredis prefixes keys but not pub/sub channels.
    return `${this.config.redis.keyPrefix}provider-cooldowns`;
  }

  private warn(error: unknown): void {
    this.log.warn({ err: error }, 'provider key cooldown through redis failed');
  }
}

/** A cooldown hash lives at least this long after its latest write (longer than any cooldown's default). */
const HASH_TTL_MS = 3_600_000;

function fieldOf(fingerprint: string, model?: string): string {
  return model === undefined ? fingerprint : `${fingerprint}\u0000${model}`;
}

/** The in-memory name of a cooldown: its endpoint and its Redis field. */
function nameOf(endpoint: string, fingerprint: string, model?: string): string {
  return `${endpoint}\u0000${fieldOf(fingerprint, model)}`;
}
