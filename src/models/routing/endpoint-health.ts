import {
  Inject,
  Injectable,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { REDIS, RedisClient } from '../../infra/redis/redis.module';
import { isRecord } from '../providers/upstream-error';

/** The window GET /v1/admin/providers reports, in minutes. */
export const HEALTH_WINDOW_MINUTES = 15;
/** How often an instance adds its counts to the shared ones. */
const FLUSH_EVERY_MS = 5_000;
const FIELDS = [
  'calls',
  'failures',
  'cooldowns',
  'ttftMs',
  'ttftCount',
] as const;
type Field = (typeof FIELDS)[number];
type Counts = Record<Field, number>;

/** An endpoint's recent health: its calls and failures over the window, and its latest failure. */
export interface EndpointHealthReport {
  calls: number;
  failures: number;
  cooldowns: number;
  /** Mean time to the first token of the calls that had one; null without any. */
  firstTokenMs: number | null;
  lastFailure: { at: string; reason: string } | null;
}

/**
 * Each endpoint's recent calls as all instances saw them (docs/adr/0063): counted here per minute, added
 * to Redis every few seconds (HINCRBY, kept for the window), so the hot path pays no Redis call. Without
 * Redis the counts are this instance's own.
 */
@Injectable()
export class EndpointHealth implements OnModuleInit, OnModuleDestroy {
  /** Counts not yet added to Redis (or, without Redis, all of the window), by endpoint and minute. */
  private readonly pending = new Map<string, Counts>();
  private readonly kept = new Map<string, Counts>();
  private readonly lastFailures = new Map<
    string,
    { at: string; reason: string }
  >();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient | null,
    private readonly log: AppLogger,
  ) {}

  onModuleInit(): void {
    if (!this.redis) return;
    this.timer = setInterval(() => void this.flush(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** One call: answered or failed before its first token (`failure`, the provider's words, short). */
  record(
    endpoint: string,
    call: { ok: boolean; firstTokenMs?: number; failure?: string },
  ): void {
    const counts = this.bucket(endpoint);
    counts.calls += 1;
    if (!call.ok) {
      counts.failures += 1;
      const failure = {
        at: new Date().toISOString(),
        reason: call.failure ?? 'failed',
      };
      this.lastFailures.set(endpoint, failure);
      this.redis
        ?.set(
          `provider-health:${endpoint}:last-failure`,
          JSON.stringify(failure),
          'EX',
          24 * 3600,
        )
        .catch(() => undefined);
    }
    if (call.firstTokenMs !== undefined) {
      counts.ttftMs += Math.round(call.firstTokenMs);
      counts.ttftCount += 1;
    }
  }

  cooledDown(endpoint: string): void {
    this.bucket(endpoint).cooldowns += 1;
  }

  /** The window's health of each endpoint named. */
  async report(
    endpoints: string[],
  ): Promise<Map<string, EndpointHealthReport>> {
    await this.flush().catch(() => undefined);
    const reports = new Map<string, EndpointHealthReport>();
    for (const endpoint of endpoints)
      reports.set(endpoint, await this.reportOf(endpoint));
    return reports;
  }

  private async reportOf(endpoint: string): Promise<EndpointHealthReport> {
    const total = emptyCounts();
    let lastFailure = this.lastFailures.get(endpoint) ?? null;
    if (this.redis) {
      const pipeline = this.redis.pipeline();
      for (const minute of windowMinutes())
        pipeline.hgetall(this.key(endpoint, minute));
      pipeline.get(`provider-health:${endpoint}:last-failure`);
      // Redis unreachable: the report says what it can (no counts) rather than failing the admin's call.
      const results = (await pipeline.exec().catch(() => null)) ?? [];
      for (const [error, value] of results.slice(0, -1))
        if (!error && isRecord(value)) addCounts(total, value);
      const [error, shared] = results.at(-1) ?? [null, null];
      if (!error && typeof shared === 'string')
        lastFailure = parseFailure(shared) ?? lastFailure;
    } else {
      for (const minute of windowMinutes()) {
        const counts = this.kept.get(`${endpoint}\u0000${minute}`);
        if (counts) addCounts(total, counts);
      }
    }
    return {
      calls: total.calls,
      failures: total.failures,
      cooldowns: total.cooldowns,
      firstTokenMs:
        total.ttftCount > 0 ? Math.round(total.ttftMs / total.ttftCount) : null,
      lastFailure,
    };
  }

  private bucket(endpoint: string): Counts {
    const name = `${endpoint}\u0000${currentMinute()}`;
    const store = this.redis ? this.pending : this.kept;
    let counts = store.get(name);
    if (!counts) {
      counts = emptyCounts();
      store.set(name, counts);
      if (!this.redis) this.forgetOld();
    }
    return counts;
  }

  /** Adds the pending counts to Redis (each minute's hash kept for the window). */
  private async flush(): Promise<void> {
    if (!this.redis || this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending.clear();
    const pipeline = this.redis.pipeline();
    for (const [name, counts] of batch) {
      const [endpoint, minute] = name.split('\u0000');
      const key = this.key(endpoint, Number(minute));
      for (const field of FIELDS)
        if (counts[field] > 0) pipeline.hincrby(key, field, counts[field]);
      pipeline.expire(key, (HEALTH_WINDOW_MINUTES + 1) * 60);
    }
    try {
      await pipeline.exec();
    } catch (error) {
      this.log.debug({ err: error }, 'provider health counts not shared');
    }
  }

  private forgetOld(): void {
    const oldest = currentMinute() - HEALTH_WINDOW_MINUTES;
    for (const name of this.kept.keys())
      if (Number(name.split('\u0000')[1]) < oldest) this.kept.delete(name);
  }

  private key(endpoint: string, minute: number): string {
    return `provider-health:${endpoint}:${minute}`;
  }
}

function currentMinute(now = Date.now()): number {
  return Math.floor(now / 60_000);
}

function windowMinutes(): number[] {
  const now = currentMinute();
  return Array.from(
    { length: HEALTH_WINDOW_MINUTES },
    (_, index) => now - index,
  );
}

function emptyCounts(): Counts {
  return { calls: 0, failures: 0, cooldowns: 0, ttftMs: 0, ttftCount: 0 };
}

function addCounts(total: Counts, counts: Record<string, unknown>): void {
  for (const field of FIELDS) total[field] += Number(counts[field] ?? 0) || 0;
}

function parseFailure(
  text: string,
): { at: string; reason: string } | undefined {
  try {
    const value = JSON.parse(text) as { at?: unknown; reason?: unknown };
    return typeof value.at === 'string' && typeof value.reason === 'string'
      ? { at: value.at, reason: value.reason }
      : undefined;
  } catch {
    return undefined;
  }
}
