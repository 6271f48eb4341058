import { PeriodicTask } from './periodic-task';

describe('PeriodicTask', () => {
  it('never runs its work twice at once: a call while it runs answers idle', async () => {
    let release: () => void = () => undefined;
    let calls = 0;
    const task = new PeriodicTask(async () => {
      calls += 1;
      await new Promise<void>((done) => (release = done));
      return 'done';
    }, 'idle');
    const first = task.run();
    expect(await task.run()).toBe('idle');
    release();
    expect(await first).toBe('done');
    expect(calls).toBe(1);
  });

  it('runs again once the previous run finished, even after a failure', async () => {
    let fail = true;
    const task = new PeriodicTask(
      () => (fail ? Promise.reject(new Error('boom')) : Promise.resolve(1)),
      0,
    );
    await expect(task.run()).rejects.toThrow('boom');
    fail = false;
    expect(await task.run()).toBe(1);
  });
});
