import { Batcher, NotDispatched } from './batcher';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>(
    (res, rej) => ((resolve = res), (reject = rej)),
  );
  return { promise, resolve, reject };
}

describe('Batcher', () => {
  it('sends an item alone at once, and items that arrive while batches run together in the next one', async () => {
    const calls: number[][] = [];
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        calls.push(items);
        const gate = deferred<void>();
        gates.push(gate);
        await gate.promise;
        return items.map((item) => item * 10);
      },
      { maxBatch: 3, maxInFlight: 1 },
    );
    const first = batcher.submit(1);
    const waiting = [2, 3, 4, 5].map((item) => batcher.submit(item));
    expect(calls).toEqual([[1]]);
    expect(batcher.waiting).toBe(4);
    gates[0].resolve();
    expect(await first).toBe(10);
    await new Promise((done) => setImmediate(done));
    expect(calls).toEqual([[1], [2, 3, 4]]);
    gates[1].resolve();
    await new Promise((done) => setImmediate(done));
    gates[2].resolve();
    expect(await Promise.all(waiting)).toEqual([20, 30, 40, 50]);
    expect(calls).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('runs a failed batch again item by item, so one bad item fails only itself', async () => {
    const batcher = new Batcher<number, number>(
      (items) =>
        items.includes(13)
          ? Promise.reject(new Error('bad item'))
          : Promise.resolve(items.map((item) => item + 1)),
      { maxBatch: 10, maxInFlight: 1 },
    );
    const hold = batcher.submit(0);
    const results = await Promise.allSettled(
      [12, 13, 14].map((item) => batcher.submit(item)),
    );
    await hold;
    expect(
      results.map((result) =>
        result.status === 'fulfilled'
          ? result.value
          : (result.reason as Error).message,
      ),
    ).toEqual([13, 'bad item', 15]);
  });

  it('drops an item still waiting at its deadline or when its signal aborts', async () => {
    const gate = deferred<void>();
    const batcher = new Batcher<string, string>(
      async (items) => {
        await gate.promise;
        return items;
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const running = batcher.submit('running', {
      deadline: performance.now() + 1,
    });
    const late = batcher.submit('late', { deadline: performance.now() + 20 });
    const controller = new AbortController();
    const leaving = batcher.submit('leaving', { signal: controller.signal });
    const patient = batcher.submit('patient');
    controller.abort();
    await expect(leaving).rejects.toEqual(new NotDispatched('aborted'));
    await expect(late).rejects.toEqual(new NotDispatched('deadline'));
    expect(batcher.waiting).toBe(1);
    gate.resolve();
    expect(await running).toBe('running');
    expect(await patient).toBe('patient');
    await expect(
      batcher.submit('x', { signal: controller.signal }),
    ).rejects.toEqual(new NotDispatched('aborted'));
  });

  it('tells how long the oldest item still waiting has waited, skipping the dropped ones', async () => {
    const gate = deferred<void>();
    const batcher = new Batcher<string, string>(
      async (items) => {
        await gate.promise;
        return items;
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    expect(batcher.oldestWaitMs()).toBe(0);
    const running = batcher.submit('running');
    expect(batcher.oldestWaitMs()).toBe(0);
    const controller = new AbortController();
    const leaving = batcher.submit('leaving', { signal: controller.signal });
    const submittedAt = performance.now();
    const patient = batcher.submit('patient');
    controller.abort();
    await expect(leaving).rejects.toEqual(new NotDispatched('aborted'));
    // The dropped item is skipped: the age is the patient one's.
    const age = batcher.oldestWaitMs(submittedAt + 1_000);
    expect(age).toBeGreaterThan(999);
    expect(age).toBeLessThanOrEqual(1_000 + (performance.now() - submittedAt));
    gate.resolve();
    await Promise.all([running, patient]);
    expect(batcher.oldestWaitMs()).toBe(0);
  });
});
