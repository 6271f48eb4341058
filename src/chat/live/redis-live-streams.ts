import { RedisClient } from '../../infra/redis/redis.module';
import { ToolEvent } from '../../tools/run/tool-events';
import { IDLE_AFTER_MS, LiveEvent, RunOutcome } from './live-event';
import { waitForWakeUp } from './wake-up';

/** Appends one entry to a run's stream, keeps the stream alive for `ttl` ms and wakes its followers. */
const APPEND_SCRIPT = `
local id = redis.call('XADD', KEYS[1], '*', 't', ARGV[2], 'o', ARGV[3], 'd', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PUBLISH', ARGV[1], id)
return id`;

/** How long a finished run's stream stays readable (followers that are late by this much use the database). */
const RETENTION_AFTER_END_MS = 5 * 60_000;

type Listener = () => void;

/**
 * Live answers shared between instances: each relayed run is a Redis stream (`live:<id>`) holding every
 * chunk from the first, plus a pub/sub channel that wakes followers. A follower subscribes first, asks for
 * the run on the shared `live:wanted` channel (the instance generating it then starts relaying it: see
 * LiveStreams), and reads the stream from where it is, so it can neither miss nor repeat a chunk. It asks
 * again after every quiet second, in case the request was lost.
 *
 * Every text entry carries its character offset in the answer. A follower that finds a gap (an append
 * lost while Redis was unreachable, or a stream expired) or cannot read the stream stops trusting the
 * relay and only ticks `idle`: its caller then completes the answer from the database once the run ends.
 */
export class RedisLiveStreams {
  private subscriber: RedisClient | undefined;
  private closed = false;
  private readonly listeners = new Map<string, Set<Listener>>();
  private wantedHandler: ((runId: string) => void) | undefined;
  private stopHandler: ((runId: string) => void) | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly channelPrefix: string,
    private readonly liveTtlMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Fire and forget, in order (one connection executes commands as sent); a lost one shows as a gap. */
  append(runId: string, offset: number, text: string): void {
    this.redis
      .eval(
        APPEND_SCRIPT,
        1,
        streamKey(runId),
        this.channel(runId),
        'text',
        String(offset),
        text,
        String(this.liveTtlMs),
      )
      .catch(this.onError);
  }

  /**
   * The run's `sequence`-th tool event (from 0), after `offset` characters of text (same order guarantee
   * as append): a follower that misses one sees the gap.
   */
  appendTool(
    runId: string,
    offset: number,
    sequence: number,
    event: ToolEvent,
  ): void {
    this.redis
      .eval(
        APPEND_SCRIPT,
        1,
        streamKey(runId),
        this.channel(runId),
        'tool',
        `${offset}:${sequence}`,
        JSON.stringify(event),
        String(this.liveTtlMs),
      )
      .catch(this.onError);
  }

  async end(runId: string, outcome: RunOutcome): Promise<void> {
    await this.redis
      .eval(
        APPEND_SCRIPT,
        1,
        streamKey(runId),
        this.channel(runId),
        'end',
        '0',
        JSON.stringify(outcome),
        String(RETENTION_AFTER_END_MS),
      )
      .catch(this.onError);
  }

  /** Calls `handler` with the id of every run an instance asks to follow (subscribes at once). */
  onWanted(handler: (runId: string) => void): void {
    this.wantedHandler = handler;
    this.subscriberConnection()
      ?.subscribe(this.wantedChannel())
      .catch(this.onError);
  }

  /** Calls `handler` with the id of every run an instance asks to stop (subscribes at once). */
  onStopAsked(handler: (runId: string) => void): void {
    this.stopHandler = handler;
    this.subscriberConnection()
      ?.subscribe(this.stopChannel())
      .catch(this.onError);
  }

  /** Asks the instance generating `runId` to stop it (POST /v1/chat/stop). */
  askToStop(runId: string): void {
    this.redis.publish(this.stopChannel(), runId).catch(this.onError);
  }

  /** Asks the instance generating `runId` to relay it. */
  want(runId: string): void {
    this.redis.publish(this.wantedChannel(), runId).catch(this.onError);
  }

  async *follow(
    runId: string,
    signal?: AbortSignal,
  ): AsyncGenerator<LiveEvent> {
    const channel = this.channel(runId);
    const wakeUps = new Set<() => void>();
    let pending: boolean;
    const listener = () => {
      pending = true;
      for (const wake of wakeUps) wake();
    };
    await this.listen(channel, listener);
    this.want(runId);
    try {
      let after = '-';
      let delivered = 0;
      let deliveredTools = 0;
      let trusted = true;
      while (!signal?.aborted) {
        pending = false;
        const entries = trusted ? await this.read(runId, after) : [];
        if (entries === undefined) trusted = false;
        for (const [entryId, fields] of entries ?? []) {
          after = entryId;
          const event = parseEntry(fields);
          if (!event) continue;
          if (event.type === 'text') {
            if (event.offset !== delivered) {
              trusted = false;
              break;
            }
            delivered += event.text.length;
            yield { type: 'text', text: event.text };
          } else if (event.type === 'tool') {
            if (
              event.offset !== delivered ||
              event.sequence !== deliveredTools
            ) {
              trusted = false;
              break;
            }
            deliveredTools += 1;
            yield { type: 'tool', event: event.event };
          } else {
            yield event;
            return;
          }
        }
        if (trusted && (pending || (entries?.length ?? 0) > 0)) continue;
        const woken = await waitForWakeUp(wakeUps, IDLE_AFTER_MS, signal);
        if (!woken && !signal?.aborted) {
          if (trusted) this.want(runId);
          yield { type: 'idle' };
        }
      }
    } finally {
      await this.unlisten(channel, listener);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber)
      await subscriber.quit().catch(() => subscriber.disconnect());
  }

  /** The entries after `after`, or undefined when Redis cannot be read. */
  private async read(
    runId: string,
    after: string,
  ): Promise<[string, string[]][] | undefined> {
    try {
      return await this.redis.xrange(
        streamKey(runId),
        after === '-' ? '-' : `(${after}`,
        '+',
      );
    } catch (error) {
      this.onError(error);
      return undefined;
    }
  }

  private channel(runId: string): string {
    // ioredis prefixes keys but not pub/sub channels.
    return `${this.channelPrefix}live:${runId}`;
  }

  private wantedChannel(): string {
    return `${this.channelPrefix}live:wanted`;
  }

  private stopChannel(): string {
    return `${this.channelPrefix}live:stop`;
  }

  /** Resolves once SUBSCRIBE is acknowledged, so nothing published afterwards can be missed. */
  private async listen(channel: string, listener: Listener): Promise<void> {
    const subscriber = this.subscriberConnection();
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(listener);
    // Without the subscription the follower still works: it reads the stream after every quiet second.
    await subscriber?.subscribe(channel).catch(this.onError);
  }

  private async unlisten(channel: string, listener: Listener): Promise<void> {
    const set = this.listeners.get(channel);
    set?.delete(listener);
    if (set && set.size === 0) {
      this.listeners.delete(channel);
      await this.subscriber?.unsubscribe(channel).catch(this.onError);
    }
  }

  /** One subscriber connection per instance; none once closed (shutdown), when followers poll. */
  private subscriberConnection(): RedisClient | undefined {
    if (!this.subscriber && !this.closed) {
      // No ready check: its INFO would be refused once the first SUBSCRIBE (queued while connecting) is in.
      this.subscriber = this.redis.duplicate({ enableReadyCheck: false });
      this.subscriber.on('error', this.onError);
      this.subscriber.on('message', (channel: string, message: string) => {
        if (channel === this.wantedChannel()) this.wantedHandler?.(message);
        else if (channel === this.stopChannel()) this.stopHandler?.(message);
        else
          for (const listener of this.listeners.get(channel) ?? []) listener();
      });
    }
    return this.subscriber;
  }
}

function streamKey(runId: string): string {
  return `live:${runId}`;
}

type StreamEntry =
  | { type: 'text'; offset: number; text: string }
  | { type: 'tool'; offset: number; sequence: number; event: ToolEvent }
  | { type: 'end'; outcome: RunOutcome };

function parseEntry(fields: string[]): StreamEntry | undefined {
  const values = new Map<string, string>();
  for (let index = 0; index + 1 < fields.length; index += 2)
    values.set(fields[index], fields[index + 1]);
  const data = values.get('d') ?? '';
  if (values.get('t') === 'text')
    return { type: 'text', offset: Number(values.get('o')), text: data };
  if (values.get('t') === 'tool') {
    const [offset, sequence] = (values.get('o') ?? '').split(':').map(Number);
    try {
      return {
        type: 'tool',
        offset,
        sequence,
        event: JSON.parse(data) as ToolEvent,
      };
    } catch {
      return undefined;
    }
  }
  if (values.get('t') === 'end') {
    try {
      return { type: 'end', outcome: JSON.parse(data) as RunOutcome };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
