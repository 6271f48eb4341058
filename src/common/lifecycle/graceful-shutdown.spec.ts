import { Writable } from 'node:stream';
import { createRootLogger } from '../logging/logger';
import { GracefulShutdown } from './graceful-shutdown';

/** A logger whose JSON lines are kept, and a shutdown whose exit codes are recorded instead of ending Jest. */
function setup(timeoutMs: number) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const log = createRootLogger('info', sink);
  const exits: number[] = [];
  const shutdown = new GracefulShutdown(log, timeoutMs, {
    exit: (code) => exits.push(code),
    handleSignals: false,
  });
  return { shutdown, lines, exits };
}

/** A step that only notes `entry` in `ran` when it runs. */
const noting = (ran: string[], entry: string) => (): Promise<void> => {
  ran.push(entry);
  return Promise.resolve();
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('GracefulShutdown', () => {
  it('runs the steps once each, latest registered first, and exits with the code asked for', async () => {
    const { shutdown, exits } = setup(1_000);
    const order: string[] = [];
    shutdown.add('close pools', noting(order, 'close pools'));
    shutdown.add('drain http', noting(order, 'drain http'));
    await Promise.all([shutdown.run('SIGTERM'), shutdown.run('SIGINT')]);
    expect(order).toEqual(['drain http', 'close pools']);
    expect(exits).toEqual([0]);
  });

  it('exits 1 when a step fails, after running the others', async () => {
    const { shutdown, exits } = setup(1_000);
    const ran: string[] = [];
    shutdown.add('close pools', noting(ran, 'close pools'));
    shutdown.add('drain http', () => Promise.reject(new Error('boom')));
    await shutdown.run('SIGTERM');
    expect(ran).toEqual(['close pools']);
    expect(exits).toEqual([1]);
  });

  it('on timeout names the stuck step, cuts connections, still runs the remaining steps once, and exits 1', async () => {
    const { shutdown, lines, exits } = setup(50);
    let releaseDrain: () => void = () => undefined;
    const closed: string[] = [];
    shutdown.add('close app (database pool, redis)', noting(closed, 'pools'));
    shutdown.add(
      'drain http',
      () => new Promise<void>((resolve) => (releaseDrain = resolve)),
    );
    let cut = 0;
    shutdown.whenTimedOut(() => {
      cut += 1;
      releaseDrain(); // cutting the connections is what lets the drain finish
    });
    await shutdown.run('SIGTERM');
    expect(cut).toBe(1);
    expect(closed).toEqual(['pools']);
    expect(exits).toEqual([1]);
    const timedOut = lines.find(
      (line) => typeof line.msg === 'string' && line.msg.includes('timed out'),
    );
    expect(timedOut).toMatchObject({ step: 'drain http', timeoutMs: 50 });
    expect(timedOut?.msg).toContain('"drain http"');
  });

  it('exits 1 without the remaining steps when a step is still stuck a second timeout later', async () => {
    const { shutdown, lines, exits } = setup(30);
    const closed: string[] = [];
    shutdown.add('close pools', noting(closed, 'pools'));
    shutdown.add('drain http', () => new Promise<void>(() => undefined));
    void shutdown.run('SIGTERM');
    await sleep(200);
    expect(exits).toEqual([1]);
    expect(closed).toEqual([]);
    expect(
      lines.some(
        (line) =>
          line.step === 'drain http' &&
          String(line.msg).includes('still stuck'),
      ),
    ).toBe(true);
  });
});
