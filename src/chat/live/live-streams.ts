import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { REDIS, RedisClient } from '../../infra/redis/redis.module';
import { ToolEvent } from '../../tools/run/tool-events';
import { LiveBuffer } from './live-buffer';
import { IDLE_AFTER_MS, LiveEvent, RunOutcome } from './live-event';
import { RedisLiveStreams } from './redis-live-streams';
import { waitForWakeUp } from './wake-up';

/** A finished run's buffer stays a little for followers that found it running; later ones read the database. */
const LOCAL_RETENTION_MS = 30_000;
/** While a run is relayed, its text goes to Redis in one entry per this many milliseconds at most. */
const RELAY_FLUSH_MS = 25;

/** What a run writes its answer to: the in-process buffer and, when another instance follows, Redis. */
export interface LiveWriter {
  /** The run's answer as this process's followers receive it. */
  readonly answer: LiveBuffer;
  append(text: string): void;
  /** A tool call decided or ended, at the current place in the text. */
  tool(event: ToolEvent): void;
  end(outcome: RunOutcome): Promise<void>;
  /** The claim did not happen: forget the run without telling anyone. */
  discard(): void;
}

/** A run's own buffer plus, once another instance asked for it, the relay of its text to Redis. */
class LocalRun {
  readonly buffer = new LiveBuffer();
  relay: Relay | undefined;
  /** The end reached Redis: a stream retained there serves any later follower. */
  relayedEnd = false;
}

/**
 * The live answers of running requests. A follower in this process subscribes to the run's own buffer.
 * A follower in another instance asks for the run through Redis; only then does the instance generating it
 * relay its text to a Redis stream (everything so far, then batched appends, then the end). A run nobody
 * follows elsewhere costs no Redis command. Without Redis there is one instance, so the buffer is all.
 * docs/adr/0033-live-streams-through-redis.md
 */
@Injectable()
export class LiveStreams implements OnModuleDestroy {
  private readonly local = new Map<string, LocalRun>();
  private readonly remote: RedisLiveStreams | null;

  constructor(
    @Inject(REDIS) redis: RedisClient | null,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly log: AppLogger,
  ) {
    const onError = (error: unknown) =>
      this.log.warn({ err: error }, 'live stream relay through redis failed');
    // Alive while the run can still append: a gap between chunks may last the provider timeout.
    const liveTtlMs =
      2 * Math.max(config.chat.leaseMs, config.chat.providerTimeoutMs);
    this.remote = redis
      ? new RedisLiveStreams(redis, config.redis.keyPrefix, liveTtlMs, onError)
      : null;
    this.remote?.onWanted((runId) => this.relay(runId));
  }

  open(runId: string): LiveWriter {
    const run = new LocalRun();
    this.local.set(runId, run);
    return {
      answer: run.buffer,
      append: (text) => {
        run.buffer.append(text);
        run.relay?.append(text);
      },
      tool: (event) => {
        run.buffer.tool(event);
        run.relay?.tool(event);
      },
      end: async (outcome) => {
        run.buffer.end(outcome);
        setTimeout(() => this.local.delete(runId), LOCAL_RETENTION_MS).unref();
        const relay = run.relay;
        if (!relay) return;
        run.relay = undefined;
        run.relayedEnd = true;
        await relay.end(outcome);
      },
      discard: () => {
        this.local.delete(runId);
      },
    };
  }

  /** Calls `handler` with every run another instance asks to stop (nothing without Redis: one instance). */
  onStopAsked(handler: (runId: string) => void): void {
    this.remote?.onStopAsked(handler);
  }

  /** Tells the other instances to stop `runId` (whichever generates it). */
  askToStop(runId: string): void {
    this.remote?.askToStop(runId);
  }

  /** The buffer of a run of this process (running, or finished in the last moments), if it is one. */
  localAnswer(runId: string): LiveBuffer | undefined {
    return this.local.get(runId)?.buffer;
  }

  /**
   * Every event of a run of another instance from its first chunk, through Redis: `idle` ticks come while
   * nothing is heard (the caller asks the database whether the run ended). Without Redis only ticks.
   */
  followElsewhere(
    runId: string,
    signal?: AbortSignal,
  ): AsyncIterable<LiveEvent> {
    return this.remote ? this.remote.follow(runId, signal) : idleTicks(signal);
  }

  async onModuleDestroy(): Promise<void> {
    await this.remote?.close();
  }

  /** Another instance follows this run: relay what exists, and from now on what comes. */
  private relay(runId: string): void {
    const run = this.local.get(runId);
    if (!run || run.relay || run.relayedEnd || !this.remote) return;
    const relay = new Relay(this.remote, runId);
    run.buffer.replayTo({
      text: (text) => relay.append(text),
      tool: (event) => relay.tool(event),
    });
    const ended = run.buffer.ended;
    if (ended) {
      run.relayedEnd = true;
      void relay.end(ended);
    } else {
      run.relay = relay;
    }
  }
}

/** Appends to a run's Redis stream in order, at most one entry per RELAY_FLUSH_MS, each with its offset. */
class Relay {
  private offset = 0;
  private tools = 0;
  private pending = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly remote: RedisLiveStreams,
    private readonly runId: string,
  ) {}

  append(text: string): void {
    if (!text) return;
    this.pending += text;
    this.timer ??= setTimeout(() => this.flush(), RELAY_FLUSH_MS);
  }

  /** Sent after the text before it, at its offset, so a follower places it exactly. */
  tool(event: ToolEvent): void {
    this.flush();
    this.remote.appendTool(this.runId, this.offset, this.tools, event);
    this.tools += 1;
  }

  async end(outcome: RunOutcome): Promise<void> {
    this.flush();
    await this.remote.end(this.runId, outcome);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    this.remote.append(this.runId, this.offset, this.pending);
    this.offset += this.pending.length;
    this.pending = '';
  }
}

/** A run this process does not have and no relay can bring: only the database will tell how it ended. */
async function* idleTicks(signal?: AbortSignal): AsyncGenerator<LiveEvent> {
  while (
    !(await waitForWakeUp(new Set(), IDLE_AFTER_MS, signal)) &&
    !signal?.aborted
  )
    yield { type: 'idle' };
}
