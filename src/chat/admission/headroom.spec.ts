import { HeadroomMonitor, shortage, StartRate } from './headroom';

const limits = {
  maxEventLoopDelayMs: 400,
  maxEventLoopUtilization: 0.95,
  maxMemoryRatio: 0.9,
  maxDatabaseWaitMs: 1_000,
};
const fine = {
  eventLoopDelayMs: 5,
  eventLoopUtilization: 0.5,
  memoryRatio: 0.2,
  databasePoolWaitMs: 0,
};

describe('shortage', () => {
  it('is none while every signal is under its limit', () => {
    expect(shortage(fine, limits)).toBeNull();
  });

  it('names the signal at or over its limit, memory first (running out of it kills the process)', () => {
    expect(shortage({ ...fine, eventLoopDelayMs: 400 }, limits)).toBe(
      'event_loop',
    );
    expect(shortage({ ...fine, databasePoolWaitMs: 1_000 }, limits)).toBe(
      'database',
    );
    expect(
      shortage(
        {
          eventLoopDelayMs: 900,
          eventLoopUtilization: 1,
          memoryRatio: 0.95,
          databasePoolWaitMs: 5_000,
        },
        limits,
      ),
    ).toBe('memory');
    expect(
      shortage(
        { ...fine, eventLoopDelayMs: 900, databasePoolWaitMs: 5_000 },
        limits,
      ),
    ).toBe('event_loop');
  });
});

describe('HeadroomMonitor', () => {
  // The ticker runs on Jest's fake timers; the clock is ours: a stall is the clock moving without ticks.
  let clock = 0;
  let waitMs = 0;
  let monitor: HeadroomMonitor;
  const tickFor = (ms: number) => {
    for (let passed = 0; passed < ms; passed += 20) {
      clock += 20;
      jest.advanceTimersByTime(20);
    }
  };
  beforeEach(() => {
    jest.useFakeTimers();
    clock = 1_000;
    monitor = new HeadroomMonitor(
      2 ** 40,
      () => waitMs,
      () => clock,
    );
    monitor.start();
  });
  afterEach(() => {
    monitor.stop();
    jest.useRealTimers();
  });

  it('sees no delay while the ticker is on time', () => {
    tickFor(2_000);
    expect(monitor.readings().eventLoopDelayMs).toBe(0);
  });

  it('sees a stall while it lasts (no tick since it began), not only after it', () => {
    tickFor(200);
    clock += 320;
    expect(monitor.readings().eventLoopDelayMs).toBe(300);
  });

  it('keeps the worst delay for up to a second after the stall, then forgets it', () => {
    tickFor(200);
    clock += 320;
    jest.advanceTimersByTime(20);
    tickFor(400);
    expect(monitor.readings().eventLoopDelayMs).toBe(300);
    tickFor(1_000);
    expect(monitor.readings().eventLoopDelayMs).toBe(0);
  });

  it('reads the database wait live and memory against the limit', () => {
    waitMs = 1_234;
    expect(monitor.readings().databasePoolWaitMs).toBe(1_234);
    expect(monitor.readings().memoryRatio).toBeGreaterThan(0);
    expect(monitor.readings().memoryRatio).toBeLessThan(1);
  });
});

describe('StartRate', () => {
  let clock = 0;
  const rate = () => new StartRate(400, () => clock);

  it('assumes the prior until a busy window shows more', () => {
    clock = 0;
    const starts = rate();
    expect(starts.perSecond()).toBe(400);
    // 500 starts in half a second with runs still waiting: 1,000 per second.
    for (let i = 0; i < 500; i += 1) starts.started(10);
    clock = 500;
    expect(starts.perSecond()).toBe(1_000);
  });

  it('does not take an idle window (nothing waiting) as what the instance can do', () => {
    clock = 0;
    const starts = rate();
    for (let i = 0; i < 5; i += 1) starts.started(0);
    clock = 500;
    expect(starts.perSecond()).toBe(400);
  });

  it('forgets a burst once it has been idle for the windows it keeps', () => {
    clock = 0;
    const starts = rate();
    for (let i = 0; i < 500; i += 1) starts.started(10);
    clock = 500;
    expect(starts.perSecond()).toBe(1_000);
    clock = 1_000;
    expect(starts.perSecond()).toBe(1_000);
    clock = 7_000;
    expect(starts.perSecond()).toBe(400);
  });
});
