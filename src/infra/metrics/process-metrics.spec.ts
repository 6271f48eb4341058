import * as perfHooks from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { registerProcessMetrics } from './process-metrics';

function valueOf(text: string, name: string): number {
  const line = text
    .split('\n')
    .find((candidate) => candidate.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in:\n${text}`);
  return Number(line.slice(name.length + 1));
}

describe('registerProcessMetrics', () => {
  it('reports CPU, memory, descriptors, event-loop lag and the Node version under the usual names', async () => {
    const registry = new Registry();
    registerProcessMetrics(registry);
    const text = await registry.metrics();
    expect(valueOf(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(text, 'process_cpu_seconds_total')).toBeCloseTo(
      valueOf(text, 'process_cpu_user_seconds_total') +
        valueOf(text, 'process_cpu_system_seconds_total'),
      6,
    );
    expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(
      10 * 1024 * 1024,
    );
    expect(valueOf(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(valueOf(text, 'nodejs_heap_size_used_bytes')).toBeLessThanOrEqual(
      valueOf(text, 'nodejs_heap_size_total_bytes'),
    );
    expect(
      valueOf(text, 'nodejs_eventloop_lag_seconds'),
    ).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'process_start_time_seconds')).toBeLessThanOrEqual(
      Date.now() / 1000,
    );
    expect(valueOf(text, 'process_open_fds')).toBeGreaterThan(0);
    expect(text).toContain(`nodejs_version_info{version="${process.version}"`);
  });

  it('moves the CPU counters by the CPU used between scrapes, never back', async () => {
    const registry = new Registry();
    registerProcessMetrics(registry);
    const first = valueOf(
      await registry.metrics(),
      'process_cpu_seconds_total',
    );
    const until = Date.now() + 30;
    while (Date.now() < until) Math.sqrt(Math.random());
    const second = valueOf(
      await registry.metrics(),
      'process_cpu_seconds_total',
    );
    expect(second).toBeGreaterThan(first);
  });

  it('starts no observer that runs between scrapes (no GC observer, no event-loop-delay timer)', async () => {
    const observe = jest.spyOn(
      perfHooks.PerformanceObserver.prototype,
      'observe',
    );
    // An event-loop-delay monitor runs once enabled; every one shares this prototype.
    const monitor = jest.spyOn(
      Object.getPrototypeOf(perfHooks.monitorEventLoopDelay()) as {
        enable: () => boolean;
      },
      'enable',
    );
    try {
      const registry = new Registry();
      registerProcessMetrics(registry);
      await registry.metrics();
      expect(observe).not.toHaveBeenCalled();
      expect(monitor).not.toHaveBeenCalled();
    } finally {
      observe.mockRestore();
      monitor.mockRestore();
    }
  });
});
