import { EventEmitter } from 'node:events';
import Redis from 'ioredis';
import { AppLogger } from '../logging/app-logger';
import { FallbackRateLimitStore } from './rate-limit.store';

/** Stands in for an ioredis client: a status, `ready` events, and an `eval` that answers or hangs. */
class FakeRedis extends EventEmitter {
  status = 'ready';
  calls = 0;
  constructor(public answer: 'count' | 'hang' | 'fail') {
    super();
  }
  eval(): Promise<[number, number]> {
    this.calls += 1;
    if (this.answer === 'hang') return new Promise(() => undefined);
    if (this.answer === 'fail')
      return Promise.reject(new Error('connection lost'));
    return Promise.resolve([42, 1000]);
  }
}

function setup(answer: 'count' | 'hang' | 'fail') {
  const redis = new FakeRedis(answer);
  const lines: { level: string; message: string }[] = [];
  const log = {
    warn: (_fields: unknown, message: string) =>
      lines.push({ level: 'warn', message }),
    info: (_fields: unknown, message: string) =>
      lines.push({ level: 'info', message }),
  } as unknown as AppLogger;
  const store = new FallbackRateLimitStore(redis as unknown as Redis, log, 20);
  return { redis, store, lines };
}

describe('FallbackRateLimitStore', () => {
  it('uses the shared counter while Redis answers', async () => {
    const { store, lines } = setup('count');
    await expect(store.hit('k', 60_000)).resolves.toEqual({
      count: 42,
      resetInMs: 1000,
    });
    expect(lines).toEqual([]);
    store.close();
  });

  it('counts locally at once, without a command, while Redis is not connected, and warns once', async () => {
    const { redis, store, lines } = setup('count');
    redis.status = 'reconnecting';
    const counts = [];
    for (let i = 0; i < 3; i++)
      counts.push((await store.hit('k', 60_000)).count);
    expect(counts).toEqual([1, 2, 3]);
    expect(redis.calls).toBe(0);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    store.close();
  });

  it('gives up on a Redis that does not answer after the wait, and on one that fails', async () => {
    const anyNumber: unknown = expect.any(Number);
    for (const answer of ['hang', 'fail'] as const) {
      const { store, lines } = setup(answer);
      await expect(store.hit('k', 60_000)).resolves.toEqual({
        count: 1,
        resetInMs: anyNumber,
      });
      await expect(store.hit('k', 60_000)).resolves.toEqual({
        count: 2,
        resetInMs: anyNumber,
      });
      expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
      store.close();
    }
  });

  it('goes back to the shared counter when Redis is ready again, saying so once', async () => {
    const { redis, store, lines } = setup('fail');
    await store.hit('k', 60_000);
    redis.answer = 'count';
    redis.emit('ready');
    redis.emit('ready');
    await expect(store.hit('k', 60_000)).resolves.toEqual({
      count: 42,
      resetInMs: 1000,
    });
    expect(lines.map((line) => line.level)).toEqual(['warn', 'info']);
    store.close();
  });
});
