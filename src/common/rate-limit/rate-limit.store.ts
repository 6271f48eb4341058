import Redis from 'ioredis';

/** A fixed-window counter: `hit` adds one to `key` and answers the count and the window's remaining time. */
export interface RateLimitStore {
  hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
}

/** Shared by every instance: INCR and the window's expiry in one atomic script. */
export class RedisRateLimitStore implements RateLimitStore {
  private static readonly SCRIPT = `
    local count = redis.call('INCR', KEYS[1])
    if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
    return { count, ttl }`;

  constructor(private readonly redis: Redis) {}

  async hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const [count, ttl] = (await this.redis.eval(RedisRateLimitStore.SCRIPT, 1, `ratelimit:${key}`, windowMs)) as [number, number];
    return { count, resetInMs: ttl };
  }
}

/** One instance only (no REDIS_URL). Expired windows are swept as they are met and once a minute. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  async hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetInMs: window.resetAt - now };
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}
