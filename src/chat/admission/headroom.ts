import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

/** Why this instance refuses new runs now: a measured shortage, or an operator's ceiling reached. */
export type AdmissionReason =
  'event_loop' | 'memory' | 'database' | 'streams_ceiling' | 'starting_ceiling';

export const ADMISSION_REASONS: readonly AdmissionReason[] = [
  'event_loop',
  'memory',
  'database',
  'streams_ceiling',
  'starting_ceiling',
];

/** The measured signals, each against its limit. */
export interface HeadroomReadings {
  /** The event loop's current stall, or the worst delay of the last second if larger (ms). */
  eventLoopDelayMs: number;
  /** The larger of resident memory over the memory limit and V8's used heap over its heap limit (0..1+). */
  memoryRatio: number;
  /** How long the oldest query waiting for a database pool connection has waited (ms; 0 when none). */
  databasePoolWaitMs: number;
}

export interface HeadroomLimits {
  maxEventLoopDelayMs: number;
  maxMemoryRatio: number;
  maxDatabasePoolWaitMs: number;
}

/** The first signal out of its limit, in the order the shortage hurts most (memory kills the process). */
export function shortage(
  readings: HeadroomReadings,
  limits: HeadroomLimits,
): AdmissionReason | null {
  if (readings.memoryRatio >= limits.maxMemoryRatio) return 'memory';
  if (readings.eventLoopDelayMs >= limits.maxEventLoopDelayMs)
    return 'event_loop';
  if (readings.databasePoolWaitMs >= limits.maxDatabasePoolWaitMs)
    return 'database';
  return null;
}

/** The ticker's period: how finely the loop's delay is seen, at the cost of one timer callback per period. */
const TICK_MS = 20;
/** The loop's delay is judged over this long a past (two halves: the current one and the one before). */
const HALF_WINDOW_MS = 500;
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

  constructor(
    private readonly memoryLimitBytes: number,
    private readonly databasePoolWaitMs: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastTick = this.halfStartedAt = now();
  }

  start(): void {
    if (this.timer) return;
    this.readMemory();
    this.lastTick = this.halfStartedAt = this.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  readings(): HeadroomReadings {
    return {
      eventLoopDelayMs: Math.max(
        this.stallMs(this.now()),
        this.worstThisHalf,
        this.worstLastHalf,
      ),
      memoryRatio: this.memoryRatio,
      databasePoolWaitMs: this.databasePoolWaitMs(),
    };
  }

  /** How much later than due the ticker is now: the loop has been busy that long without a break. */
  private stallMs(now: number): number {
    return Math.max(0, now - this.lastTick - TICK_MS);
  }

  private tick(): void {
    const now = this.now();
    const delay = this.stallMs(now);
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
