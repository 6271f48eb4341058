import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

import { AdmissionReason } from '../../infra/metrics/metrics';

export type { AdmissionReason };

/** The measured signals, each against its limit. */
export interface HeadroomReadings {
  /** The event loop's current stall, or the worst delay of the last second if larger (ms). */
  eventLoopDelayMs: number;
  /** The share of the last half second the event loop was busy (0..1): 1 is a saturated process. */
  eventLoopUtilization: number;
  /** The larger of resident memory over the memory limit and V8's used heap over its heap limit (0..1+). */
  memoryRatio: number;
  /** How long the oldest query waiting for a database pool connection has waited (ms; 0 when none). */
  databasePoolWaitMs: number;
}

export interface HeadroomLimits {
  maxEventLoopDelayMs: number;
  maxEventLoopUtilization: number;
  maxMemoryRatio: number;
  maxDatabaseWaitMs: number;
}

/** The first signal out of its limit, in the order the shortage hurts most (memory kills the process). */
export function shortage(
  readings: HeadroomReadings,
  limits: HeadroomLimits,
): AdmissionReason | null {
  if (readings.memoryRatio >= limits.maxMemoryRatio) return 'memory';
  if (
    readings.eventLoopDelayMs >= limits.maxEventLoopDelayMs ||
    readings.eventLoopUtilization > limits.maxEventLoopUtilization
  )
    return 'event_loop';
  if (readings.databasePoolWaitMs >= limits.maxDatabaseWaitMs)
    return 'database';
  return null;
}

/** The ticker's period: how finely the loop's delay is seen, at the cost of one timer callback per period. */
const TICK_MS = 20;
/** The loop's delay is judged over this long a past (two halves: the current one and the one before). */
const HALF_WINDOW_MS = 500;
/** The loop's utilization is judged over this long a past. */
const UTILIZATION_WINDOW_MS = 500;
/** Memory is read every this many ticks (a heap-statistics call is a few microseconds). */
const MEMORY_EVERY_TICKS = 10;

/**
 * Measures this process's headroom for admission: an unref'd 20 ms ticker whose lateness is the event
 * loop's delay (its current stall is read at decision time, so a burst parsed in one long loop turn is
 * seen while it is parsed, not after), memory sampled every 200 ms, and the database pool's wait read live.
 * docs/adr/0065-adaptive-admission.md
 */
export class HeadroomMonitor {
  private timer: NodeJS.Timeout | undefined;
  private lastTick: number;
  private ticks = 0;
  private halfStartedAt: number;
  private worstThisHalf = 0;
  private worstLastHalf = 0;
  private memoryRatio = 0;
  /** The loop's cumulative busy time at the last tick, and per tick of the window: when, how long, how busy. */
  private lastActive: number;
  private readonly utilizationTicks: {
    at: number;
    elapsed: number;
    active: number;
  }[] = [];

  constructor(
    private readonly memoryLimitBytes: number,
    private readonly databasePoolWaitMs: () => number,
    private readonly now: () => number = () => performance.now(),
    /** The event loop's cumulative busy time (ms), as perf_hooks measures it (libuv's idle time aside). */
    private readonly loopActiveMs: () => number = () =>
      performance.eventLoopUtilization().active,
  ) {
    this.lastTick = this.halfStartedAt = now();
    this.lastActive = loopActiveMs();
  }

  start(): void {
    if (this.timer) return;
    this.readMemory();
    this.lastTick = this.halfStartedAt = this.now();
    this.lastActive = this.loopActiveMs();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  readings(): HeadroomReadings {
    const now = this.now();
    return {
      eventLoopDelayMs: Math.max(
        this.stallMs(now),
        this.worstThisHalf,
        this.worstLastHalf,
      ),
      eventLoopUtilization: this.utilization(now),
      memoryRatio: this.memoryRatio,
      databasePoolWaitMs: this.databasePoolWaitMs(),
    };
  }

  /** How much later than due the ticker is now: the loop has been busy that long without a break. */
  private stallMs(now: number): number {
    return Math.max(0, now - this.lastTick - TICK_MS);
  }

  /** Busy time over elapsed time in the window, the time since the last tick (a stall: all busy) included. */
  private utilization(now: number): number {
    let elapsed = now - this.lastTick;
    let active = this.loopActiveMs() - this.lastActive;
    for (const tick of this.utilizationTicks) {
      if (tick.at < now - UTILIZATION_WINDOW_MS) continue;
      elapsed += tick.elapsed;
      active += tick.active;
    }
    return elapsed > 0 ? Math.min(1, active / elapsed) : 0;
  }

  private tick(): void {
    const now = this.now();
    const delay = this.stallMs(now);
    const active = this.loopActiveMs();
    this.utilizationTicks.push({
      at: now,
      elapsed: now - this.lastTick,
      active: active - this.lastActive,
    });
    while (this.utilizationTicks[0].at < now - UTILIZATION_WINDOW_MS)
      this.utilizationTicks.shift();
    this.lastActive = active;
    this.lastTick = now;
    if (now - this.halfStartedAt >= HALF_WINDOW_MS) {
      this.worstLastHalf = this.worstThisHalf;
      this.worstThisHalf = 0;
      this.halfStartedAt = now;
    }
    this.worstThisHalf = Math.max(this.worstThisHalf, delay);
    this.ticks += 1;
    if (this.ticks % MEMORY_EVERY_TICKS === 0) this.readMemory();
  }

  private readMemory(): void {
    const heap = getHeapStatistics();
    this.memoryRatio = Math.max(
      process.memoryUsage.rss() / this.memoryLimitBytes,
      heap.used_heap_size / heap.heap_size_limit,
    );
  }
}

/**
 * How many runs this instance starts per second when it is busy starting them: the best rate of the last
 * few seconds' half-second windows, never below `priorPerSecond` (what an idle instance assumes before a
 * burst has shown it more). Only a rate seen with runs waiting says what the instance can do; an idle
 * window says nothing, so it never lowers the figure below the prior.
 */
export class StartRate {
  private windowStartedAt: number;
  private startsThisWindow = 0;
  private busyThisWindow = false;
  /** Rates (per second) of the last busy windows, newest last. */
  private readonly recent: number[] = [];

  constructor(
    private readonly priorPerSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.windowStartedAt = now();
  }

  /** A run's start is over (claimed, replayed or refused); `waiting`: runs still starting after it. */
  started(waiting: number): void {
    this.roll();
    this.startsThisWindow += 1;
    if (waiting > 0) this.busyThisWindow = true;
  }

  perSecond(): number {
    this.roll();
    return Math.max(this.priorPerSecond, ...this.recent);
  }

  private roll(): void {
    const now = this.now();
    const elapsed = now - this.windowStartedAt;
    if (elapsed < HALF_WINDOW_MS) return;
    if (this.busyThisWindow) {
      this.recent.push((this.startsThisWindow * 1000) / elapsed);
      if (this.recent.length > RATE_WINDOWS_KEPT) this.recent.shift();
    } else if (elapsed >= HALF_WINDOW_MS * RATE_WINDOWS_KEPT) {
      // Idle for as long as the rates are kept: they are stale, the prior stands again.
      this.recent.length = 0;
    }
    this.windowStartedAt = now;
    this.startsThisWindow = 0;
    this.busyThisWindow = false;
  }
}

/** Busy windows whose rate is kept (10 half-seconds: the last few seconds of a burst). */
const RATE_WINDOWS_KEPT = 10;
