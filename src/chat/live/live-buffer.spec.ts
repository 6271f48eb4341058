import { LiveBuffer } from './live-buffer';
import { LiveEvent } from './live-event';

async function collect(events: AsyncIterable<LiveEvent>): Promise<LiveEvent[]> {
  const seen: LiveEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('LiveBuffer', () => {
  it('gives a late follower everything from the first chunk, then the rest as it comes', async () => {
    const buffer = new LiveBuffer();
    buffer.append('a');
    buffer.append('b');
    const early = collect(buffer.follow());
    await new Promise((done) => setImmediate(done));
    buffer.append('c');
    const late = collect(buffer.follow());
    buffer.end({ status: 'completed' });
    const expected = [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'text', text: 'c' },
      { type: 'end', outcome: { status: 'completed' } },
    ];
    expect(await early).toEqual(expected);
    expect(await late).toEqual(expected);
  });

  it('stops a follower whose signal is aborted', async () => {
    const buffer = new LiveBuffer();
    const controller = new AbortController();
    const following = collect(buffer.follow(controller.signal));
    controller.abort();
    expect(await following).toEqual([]);
  });
});
