import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { AppLogger } from '../logging/app-logger';
import { withTimeout } from '../with-timeout';

/** A fixed-window counter: `hit` adds one to `key` and answers the count and the window's remaining time. */
export interface RateLimitStore {
  hit(
    key: string,
    windowMs: number,
  ): Promise<{ count: number; resetInMs: number }>;
  /** Stops its timers (in-process windows). */
  close?(): void;
}

/** INCR and the window's expiry in one atomic step; answers `{ count, ttl }`. */
const RATE_LIMIT_SCRIPT = `
    local count = redis.call('INCR', KEYS[1])
    if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
    return { count, ttl }`;

/** The script's SHA-1, by which Redis keeps it once it has been sent (EVALSHA). */
export const RATE_LIMIT_SCRIPT_SHA = createHash('sha1')
  .update(RATE_LIMIT_SCRIPT)
  .digest('hex');

/**
 * Shared by every instance. Each hit sends the script's SHA-1 rather than the script (a request's one Redis
 * command, so its size and Redis hashing it again were a part of every chat); a Redis that does not hold
 * the script yet (restarted, flushed, another server) answers NOSCRIPT and gets it once with EVAL.
 */
class RedisRateLimitStore implements RateLimitStore {
  constructor(private readonly redis: Redis) {}

  async hit(
    key: string,
    windowMs: number,
  ): Promise<{ count: number; resetInMs: number }> {
    const args = [1, `ratelimit:${key}`, windowMs] as const;
    let reply: unknown;
    try {
      reply = await this.redis.evalsha(RATE_LIMIT_SCRIPT_SHA, ...args);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT')))
        throw error;
      reply = await this.redis.eval(RATE_LIMIT_SCRIPT, ...args);
    }
    const [count, ttl] = reply as [number, number];
    return { count, resetInMs: ttl };
  }
}

/** The longest a request waits on Redis for its count before this instance counts it alone. */
const REDIS_WAIT_MS = 100;

/**
 * Counters in Redis while it answers; while it is down (not connected, or no answer within
 * REDIS_WAIT_MS) each instance counts in its own memory, so sign-in and registration keep working with
 * per-instance limits. One warning when Redis is first missed, one line when it is back; then the
 * shared counters are used again (the local ones are left to expire).
 */
export class FallbackRateLimitStore implements RateLimitStore {
  private readonly shared: RedisRateLimitStore;
  private readonly local = new MemoryRateLimitStore();
  private degraded = false;

  constructor(
    private readonly redis: Redis,
    private readonly log: AppLogger,
    private readonly waitMs = REDIS_WAIT_MS,
  ) {
    this.shared = new RedisRateLimitStore(redis);
    redis.on('ready', () => this.recovered());
  }

  async hit(
    key: string,
    windowMs: number,
  ): Promise<{ count: number; resetInMs: number }> {
    // Not connected: ioredis would queue the command until it reconnects; count here at once instead.
    if (this.redis.status !== 'ready')
      return this.fallback(key, windowMs, `redis is ${this.redis.status}`);
    try {
      return await withTimeout(
        this.shared.hit(key, windowMs),
        this.waitMs,
        `no answer from redis within ${this.waitMs} ms`,
      );
    } catch (error) {
      return this.fallback(
        key,
        windowMs,
        error instanceof Error ? error.message : String(error),
      );
    }
  }

  close(): void {
    this.local.close();
  }

  private fallback(
    key: string,
    windowMs: number,
    reason: string,
  ): Promise<{ count: number; resetInMs: number }> {
    if (!this.degraded) {
      this.degraded = true;
      this.log.warn(
        { reason },
        'redis unavailable: rate limits are counted per instance until it is back',
      );
    }
    return this.local.hit(key, windowMs);
  }

  private recovered(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.log.info({}, 'redis is back: rate limits are shared again');
  }
}

/** One instance only (no REDIS_URL). Expired windows are swept as they are met and once a minute. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<
    string,
    { count: number; resetAt: number }
  >();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  hit(
    key: string,
    windowMs: number,
  ): Promise<{ count: number; resetInMs: number }> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return Promise.resolve({
      count: window.count,
      resetInMs: window.resetAt - now,
    });
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows)
      if (window.resetAt <= now) this.windows.delete(key);
  }
}
