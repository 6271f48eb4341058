import { ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { PASSWORD, registerUser, uniqueEmail } from './support/factories';
import { freePort } from './support/service-process';
import { eventually } from './support/eventually';
import { bootTestApp, TestApp } from './support/test-app';
import { spawnRedisServer } from './support/test-redis';

/** A Redis of this test's own (the suite's shared one must stay up), stopped and started again on one port. */
class OwnRedis {
  private child: ChildProcess | undefined;
  constructor(readonly port: number) {}

  async start(): Promise<void> {
    // Found or installed by global-setup for runs that include this suite.
    const binary = process.env.TEST_REDIS_SERVER_PATH;
    if (!binary)
      throw new Error(
        'TEST_REDIS_SERVER_PATH is not set: run the tests through jest (global-setup)',
      );
    this.child = spawnRedisServer(binary, this.port);
    const probe = new Redis({
      port: this.port,
      lazyConnect: true,
      retryStrategy: () => 50,
      maxRetriesPerRequest: null,
    });
    try {
      await probe.connect().catch(() => undefined);
      await probe.ping();
    } finally {
      probe.disconnect();
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

describe('Redis outage: sign-in and registration keep working with per-instance limits', () => {
  let redis: OwnRedis;
  let t: TestApp;
  let inspect: Redis;
  const prefix = `outage-${Date.now()}:`;

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    t = await bootTestApp({
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_LOGIN_EMAIL: '3/600',
    });
    inspect = new Redis({
      port: redis.port,
      lazyConnect: true,
      retryStrategy: () => 100,
      maxRetriesPerRequest: null,
    });
  });
  afterAll(async () => {
    inspect.disconnect();
    await t.close();
    await redis.stop();
  });

  const login = (email: string, password = 'wrong password 123') =>
    t.http.post('/v1/auth/login').send({ email, password });
  const warnings = () =>
    t.logs.filter((line) =>
      String(line.msg).startsWith(
        'redis unavailable: rate limits are counted per instance',
      ),
    );

  it('counts in Redis while it is up, per instance while it is down (no 500), and in Redis again once it is back', async () => {
    const { email } = await registerUser(t.http);
    await login(email).expect(401);
    expect(
      Number(await inspect.get(`${prefix}ratelimit:login-email:${email}`)),
    ).toBe(1);

    await redis.stop();
    // Login, registration and the password routes answer as usual; nothing waits on the dead Redis.
    const other = await registerUser(t.http);
    await t.http
      .post('/v1/auth/forgot-password')
      .send({ email: other.email })
      .expect(202);
    await t.http
      .post('/v1/auth/login')
      .send({ email: other.email, password: PASSWORD })
      .expect(200);
    const during = [];
    for (let attempt = 0; attempt < 4; attempt++)
      during.push((await login(email)).status);
    // The per-instance counter starts from zero: three more attempts, then the limit holds.
    expect(during).toEqual([401, 401, 401, 429]);
    expect(warnings()).toHaveLength(1);
    const ready = await t.http.get('/v1/health/ready').expect(200);
    expect(ready.body).toEqual({
      status: 'degraded',
      checks: { database: 'up', redis: 'down' },
      admission: expect.objectContaining({ state: 'admitting' }),
    });

    await redis.start();
    await eventually(
      async () => (await t.http.get('/v1/health/ready')).body.status === 'ok',
      15_000,
      100,
    );
    const fresh = uniqueEmail('after');
    await login(fresh).expect(401);
    await eventually(
      async () =>
        Number(await inspect.get(`${prefix}ratelimit:login-email:${fresh}`)) ===
        1,
      15_000,
      100,
    );
    expect(
      t.logs.filter(
        (line) => line.msg === 'redis is back: rate limits are shared again',
      ),
    ).toHaveLength(1);
    expect(warnings()).toHaveLength(1);
    expect(
      t.logs.filter((line) => line.msg === 'unhandled error'),
    ).toHaveLength(0);
  }, 60_000);
});
