import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { LiveEvent } from '../src/chat/live/live-event';
import { RedisLiveStreams } from '../src/chat/live/redis-live-streams';
import { runRedisUrl } from './support/test-redis';

async function take(
  events: AsyncIterator<LiveEvent>,
  count: number,
): Promise<LiveEvent[]> {
  const seen: LiveEvent[] = [];
  while (seen.length < count) {
    const next = await events.next();
    if (next.done) break;
    seen.push(next.value);
  }
  return seen;
}

/** The Redis relay of live answers on its own, against the real Redis of the run. */
describe('RedisLiveStreams', () => {
  const prefix = `test:${randomUUID()}:`;
  let redis: Redis;
  let streams: RedisLiveStreams;
  const errors: unknown[] = [];
  beforeAll(() => {
    redis = new Redis(runRedisUrl(), {
      keyPrefix: prefix,
    });
    streams = new RedisLiveStreams(redis, prefix, 60_000, (error) =>
      errors.push(error),
    );
  });
  afterAll(async () => {
    await streams.close();
    await redis.quit();
  });

  it('gives a follower every chunk from the first, in order, then the end', async () => {
    const run = randomUUID();
    streams.append(run, 0, 'one');
    const follower = streams.follow(run)[Symbol.asyncIterator]();
    const first = await take(follower, 1);
    streams.append(run, 3, ' two');
    await streams.end(run, { status: 'completed' });
    expect([...first, ...(await take(follower, 5))]).toEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: ' two' },
      { type: 'end', outcome: { status: 'completed' } },
    ]);
  });

  it('stops trusting the relay at a gap (a lost chunk) and only ticks idle from there', async () => {
    const run = randomUUID();
    streams.append(run, 0, 'alpha');
    // ' beta' (offset 5) was lost on its way to Redis.
    streams.append(run, 10, ' gamma');
    await streams.end(run, { status: 'completed' });
    const follower = streams.follow(run)[Symbol.asyncIterator]();
    expect(await take(follower, 2)).toEqual([
      { type: 'text', text: 'alpha' },
      { type: 'idle' },
    ]);
    await follower.return?.(undefined);
  });

  it('releases its subscription when the follower is closed early', async () => {
    const run = randomUUID();
    const channel = `${prefix}live:${run}`;
    const follower = streams.follow(run)[Symbol.asyncIterator]();
    streams.append(run, 0, 'x');
    await take(follower, 1);
    expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, 1]);
    await follower.return?.(undefined);
    expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, 0]);
    expect(errors).toEqual([]);
  });
});
