import { createServer, Server } from 'node:net';
import { DrainState } from '../src/common/lifecycle/drain-state';
import { bootTestApp, TestApp } from './support/test-app';

describe('health', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('live answers ok without touching dependencies', async () => {
    t = await bootTestApp();
    expect((await t.http.get('/v1/health/live').expect(200)).body).toEqual({
      status: 'ok',
    });
  });

  it('ready checks the database and Redis (or reports Redis as not configured)', async () => {
    t = await bootTestApp();
    const res = await t.http.get('/v1/health/ready').expect(200);
    expect(res.body).toEqual({
      status: 'ok',
      checks: {
        database: 'up',
        redis: t.config.redis.url ? 'up' : 'not_configured',
      },
      admission: expect.objectContaining({
        state: 'admitting',
        reason: null,
        openStreams: 0,
        startingRuns: 0,
      }),
    });
    const { eventLoopDelayMs, memoryPercent, databaseWaitMs } =
      res.body.admission;
    expect(memoryPercent).toBeGreaterThan(0);
    expect(memoryPercent).toBeLessThan(90);
    for (const value of [eventLoopDelayMs, databaseWaitMs])
      expect(value).toBeGreaterThanOrEqual(0);
  });

  it('ready answers 503 while the instance drains for shutdown, so load balancers move away', async () => {
    t = await bootTestApp();
    t.app.get(DrainState).begin();
    const res = await t.http.get('/v1/health/ready').expect(503);
    expect(res.body).toEqual(
      expect.objectContaining({
        code: 'not_ready',
        detail: expect.stringContaining('Shutting down'),
      }),
    );
    expect(res.headers.connection).toBe('close');
    expect(t.logs.some((line) => line.msg === 'unhandled error')).toBe(false);
  });

  it('ready stays 200 but says degraded, naming Redis, while Redis does not answer (everything is still served)', async () => {
    // A port that accepts TCP but never speaks Redis: the check must time out, not hang.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) =>
      silent.listen(0, '127.0.0.1', resolve),
    );
    const port = (silent.address() as { port: number }).port;
    t = await bootTestApp({ REDIS_URL: `redis://127.0.0.1:${port}` });
    const res = await t.http.get('/v1/health/ready').expect(200);
    expect(res.body).toEqual({
      status: 'degraded',
      checks: { database: 'up', redis: 'down' },
      admission: expect.objectContaining({ state: 'admitting' }),
    });
    await t.close();
    t = undefined;
    silent.close();
  });
});
