import { readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Registry } from 'prom-client';

/**
 * The process metrics, under the names of prom-client's defaults (so the usual Node.js dashboards work),
 * every one read when scraped and nothing in between. prom-client's own set also keeps two observers running
 * all the time, one on every garbage collection and an event-loop-delay timer every 10 ms: with them the
 * service spent about 3 % more CPU per chat in `npm run bench:metrics`, without them no measurable amount. So
 * the GC duration histogram and the delay percentiles are left out; the event-loop lag is sampled at scrape.
 */
export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  cpuCounters(registers);
  const startTime = Math.round((Date.now() - process.uptime() * 1000) / 1000);
  new Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since unix epoch in seconds.',
    registers,
  }).set(startTime);
  const memory = (
    name: string,
    help: string,
    pick: (usage: NodeJS.MemoryUsage) => number,
  ) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(pick(process.memoryUsage()));
      },
    });
  memory(
    'process_resident_memory_bytes',
    'Resident memory size in bytes.',
    (usage) => usage.rss,
  );
  memory(
    'nodejs_heap_size_total_bytes',
    'Process heap size from Node.js in bytes.',
    (usage) => usage.heapTotal,
  );
  memory(
    'nodejs_heap_size_used_bytes',
    'Process heap size used from Node.js in bytes.',
    (usage) => usage.heapUsed,
  );
  memory(
    'nodejs_external_memory_bytes',
    'Node.js external memory size in bytes.',
    (usage) => usage.external,
  );
  if (openFileDescriptors() !== undefined) {
    new Gauge({
      name: 'process_open_fds',
      help: 'Number of open file descriptors.',
      registers,
      collect() {
        this.set(openFileDescriptors() ?? 0);
      },
    });
  }
  new Gauge({
    name: 'nodejs_active_resources_total',
    help: 'Active resources keeping the event loop alive (sockets, timers, ...).',
    registers,
    collect() {
      this.set(process.getActiveResourcesInfo().length);
    },
  });
  new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Lag of the event loop in seconds, sampled at scrape: how long a callback queued then waited.',
    registers,
    async collect() {
      const queuedAt = performance.now();
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.set((performance.now() - queuedAt) / 1000);
    },
  });
  const [major, minor, patch] = process.versions.node.split('.').map(Number);
  new Gauge({
    name: 'nodejs_version_info',
    help: 'Node.js version info.',
    labelNames: ['version', 'major', 'minor', 'patch'],
    registers,
  }).set({ version: process.version, major, minor, patch }, 1);
}

/**
 * process_cpu_*_seconds_total: counters moved at each scrape by the CPU used since the previous one. The first
 * registered collects for all three, so none is written before it moved.
 */
function cpuCounters(registers: Registry[]): void {
  let last = process.cpuUsage();
  const [user, system, total] = [
    ['process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.'],
    [
      'process_cpu_system_seconds_total',
      'Total system CPU time spent in seconds.',
    ],
    [
      'process_cpu_seconds_total',
      'Total user and system CPU time spent in seconds.',
    ],
  ].map(([name, help], index) => {
    return new Counter({
      name,
      help,
      registers,
      collect:
        index === 0
          ? () => {
              const now = process.cpuUsage();
              add(
                (now.user - last.user) / 1e6,
                (now.system - last.system) / 1e6,
              );
              last = now;
            }
          : undefined,
    });
  });
  const add = (userSeconds: number, systemSeconds: number) => {
    user.inc(userSeconds);
    system.inc(systemSeconds);
    total.inc(userSeconds + systemSeconds);
  };
  // Counted from the start of the process, not of the registry.
  add(last.user / 1e6, last.system / 1e6);
}

/** Open descriptors of this process (Linux: /proc/self/fd), or undefined where that cannot be read. */
function openFileDescriptors(): number | undefined {
  try {
    // One entry is the descriptor readdir itself holds open.
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return undefined;
  }
}
