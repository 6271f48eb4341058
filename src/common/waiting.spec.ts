import { doublingDelays, pollUntil, retrying } from './waiting';

describe('waiting', () => {
  it('doubles delays up to the ceiling', () => {
    const delays = doublingDelays(250, 1_000);
    expect(
      [1, 2, 3, 4, 5].map((): number => delays.next().value as number),
    ).toEqual([250, 500, 1_000, 1_000, 1_000]);
  });

  it('retries a retryable failure after each delay, then answers', async () => {
    let calls = 0;
    const waited: number[] = [];
    const result = await retrying(
      () =>
        ++calls < 3 ? Promise.reject(new Error('down')) : Promise.resolve('ok'),
      {
        delays: [1, 2, 3],
        giveUpAt: Date.now() + 10_000,
        retryable: () => true,
        onRetry: (_error, delayMs) => waited.push(delayMs),
      },
    );
    expect({ result, calls, waited }).toEqual({
      result: 'ok',
      calls: 3,
      waited: [1, 2],
    });
  });

  it('throws a failure that may not pass, or one whose next wait would end past the deadline', async () => {
    const fatal = new Error('fatal');
    let calls = 0;
    await expect(
      retrying(() => (calls++, Promise.reject(fatal)), {
        delays: [1],
        giveUpAt: Date.now() + 10_000,
        retryable: () => false,
      }),
    ).rejects.toBe(fatal);
    expect(calls).toBe(1);
    const late = new Error('still down');
    await expect(
      retrying(() => Promise.reject(late), {
        delays: [60_000],
        giveUpAt: Date.now() + 1_000,
        retryable: () => true,
      }),
    ).rejects.toBe(late);
  });

  it('polls until the value is final, or answers the last one at the deadline', async () => {
    let reads = 0;
    expect(
      await pollUntil(
        () => Promise.resolve(++reads),
        (n) => n === 3,
        {
          intervalMs: 1,
          deadline: Date.now() + 10_000,
        },
      ),
    ).toBe(3);
    expect(
      await pollUntil(
        () => Promise.resolve('streaming'),
        () => false,
        {
          intervalMs: 1,
          deadline: Date.now() - 1,
        },
      ),
    ).toBe('streaming');
  });
});
