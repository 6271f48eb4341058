import { StartGate, StartRefused } from './start-gate';

describe('StartGate', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('admits up to its slots at once and the rest in arrival order as slots free', async () => {
    const gate = new StartGate(2);
    const order: string[] = [];
    const releaseA = await gate.enter(1000, 0);
    const releaseB = await gate.enter(1000, 0);
    const c = gate.enter(1000, 0).then((release) => (order.push('c'), release));
    const d = gate.enter(1000, 0).then((release) => (order.push('d'), release));
    expect(gate.queued).toBe(2);
    releaseA();
    releaseA();
    await Promise.resolve();
    expect(order).toEqual(['c']);
    releaseB();
    await d;
    expect(order).toEqual(['c', 'd']);
    expect(gate.queued).toBe(0);
    (await c)();
  });

  it('refuses a waiter at its deadline, and one whose client left, without losing a slot', async () => {
    const gate = new StartGate(1);
    const release = await gate.enter(1000, 0);
    const late = gate.enter(50, 0);
    const controller = new AbortController();
    const leaving = gate.enter(10_000, 0, controller.signal);
    const patient = gate.enter(10_000, 0);
    jest.advanceTimersByTime(60);
    await expect(late).rejects.toEqual(new StartRefused('deadline'));
    controller.abort();
    await expect(leaving).rejects.toEqual(new StartRefused('aborted'));
    release();
    const next = await patient;
    expect(gate.queued).toBe(0);
    next();
    (await gate.enter(1, 0))();
  });

  it('refuses at once when no slot is free and the deadline has passed', async () => {
    const gate = new StartGate(1);
    await gate.enter(1000, 0);
    await expect(gate.enter(100, 200)).rejects.toEqual(new StartRefused('deadline'));
  });
});
