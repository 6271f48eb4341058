import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import Redis from 'ioredis';
import { AppLogger } from '../logging/app-logger';
import {
  FallbackRateLimitStore,
  RATE_LIMIT_SCRIPT_SHA,
} from './rate-limit.store';

/**
 * Stands in for an ioredis client: a status, `ready` events, and EVALSHA/EVAL that answer or hang. With
 * `noscript`, EVALSHA answers NOSCRIPT until the script has been sent once with EVAL (as Redis does).
 */
class FakeRedis extends EventEmitter {
  status = 'ready';
  calls = 0;
  commands: string[] = [];
  private scripts = new Set<string>();
  constructor(public answer: 'count' | 'hang' | 'fail' | 'noscript') {
    super();
  }
  evalsha(sha: string): Promise<[number, number]> {
    this.commands.push('evalsha');
    if (this.answer === 'noscript' && !this.scripts.has(sha))
      return Promise.reject(
        new Error('NOSCRIPT No matching script. Please use EVAL.'),
      );
    return this.reply();
  }
  eval(script: string): Promise<[number, number]> {
    this.commands.push('eval');
    this.scripts.add(createHash('sha1').update(script).digest('hex'));
    return this.reply();
  }
  private reply(): Promise<[number, number]> {
    this.calls += 1;
    if (this.answer === 'hang') return new Promise(() => undefined);
    if (this.answer === 'fail')
      return Promise.reject(new Error('connection lost'));
    return Promise.resolve([42, 1000]);
  }
}

function setup(answer: 'count' | 'hang' | 'fail' | 'noscript') {
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
  it('sends the script once to a Redis that does not hold it (NOSCRIPT), then only its SHA-1', async () => {
    const { redis, store, lines } = setup('noscript');
    for (let i = 0; i < 3; i++)
      await expect(store.hit('k', 60_000)).resolves.toEqual({
        count: 42,
        resetInMs: 1000,
      });
    expect(redis.commands).toEqual(['evalsha', 'eval', 'evalsha', 'evalsha']);
    expect(RATE_LIMIT_SCRIPT_SHA).toMatch(/^[0-9a-f]{40}$/);
    expect(lines).toEqual([]);
  });

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
