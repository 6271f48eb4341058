import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection, so the heap that is left is what is still referenced (a leak shows here, garbage
 * does not). `npm run bench` cannot pass --expose-gc, so the flag is set at runtime and gc fetched from a new context.
 */
export function collectGarbage(): NodeJS.MemoryUsage {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  if (typeof gc === 'function') {
    gc();
    gc();
  }
  return process.memoryUsage();
}

export interface Summary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles (p in 0..100) of a sample; NaN for an empty one. */
export function summarize(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]);
  return { count: sorted.length, p50: rank(50), p95: rank(95), p99: rank(99), max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1] };
}

export function ms(value: number): string {
  if (Number.isNaN(value)) return 'n/a';
  return value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(2)} ms`;
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export interface MemoryReport {
  before: NodeJS.MemoryUsage;
  peakRss: number;
  peakHeapUsed: number;
  peakHeapTotal: number;
  peakExternal: number;
  after: NodeJS.MemoryUsage;
  samples: number;
  /** Event-loop delay over the run (ms): how late timers and I/O callbacks of this one process ran. */
  loopDelayP99: number;
  loopDelayMax: number;
  /** Process CPU time (user + system, all threads) from start() to stop(), in ms. */
  cpuMs: number;
}

/** From construction to stop(): process.memoryUsage() every `everyMs`, the event-loop delay and the CPU time used. */
export class MemorySampler {
  private readonly before = process.memoryUsage();
  private peakRss = this.before.rss;
  private peakHeapUsed = this.before.heapUsed;
  private peakHeapTotal = this.before.heapTotal;
  private peakExternal = this.before.external;
  private samples = 1;
  private readonly timer: NodeJS.Timeout;
  private readonly loop = monitorEventLoopDelay({ resolution: 10 });
  private readonly cpu = process.cpuUsage();

  constructor(everyMs = 50) {
    this.loop.enable();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  stop(): MemoryReport {
    clearInterval(this.timer);
    this.loop.disable();
    const cpu = process.cpuUsage(this.cpu);
    const after = this.sample();
    return {
      before: this.before,
      peakRss: this.peakRss,
      peakHeapUsed: this.peakHeapUsed,
      peakHeapTotal: this.peakHeapTotal,
      peakExternal: this.peakExternal,
      after,
      samples: this.samples,
      loopDelayP99: this.loop.percentile(99) / 1e6,
      loopDelayMax: this.loop.max / 1e6,
      cpuMs: (cpu.user + cpu.system) / 1000,
    };
  }

  private sample(): NodeJS.MemoryUsage {
    const usage = process.memoryUsage();
    this.samples += 1;
    this.peakRss = Math.max(this.peakRss, usage.rss);
    this.peakHeapUsed = Math.max(this.peakHeapUsed, usage.heapUsed);
    this.peakHeapTotal = Math.max(this.peakHeapTotal, usage.heapTotal);
    this.peakExternal = Math.max(this.peakExternal, usage.external);
    return usage;
  }
}
