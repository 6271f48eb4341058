import { ToolEvent } from '../../tools/run/tool-events';
import { interleave, RunOutcome } from './live-event';

/** Receives an answer: its text in order from the first byte, the tool events among it, then one end. */
export interface AnswerSink {
  text(chunk: string): void;
  /** A tool call decided or ended (only runs that use tools have them). */
  tool?(event: ToolEvent): void;
  end(outcome: RunOutcome): void;
}

/** A tool event and the length of the text before it. */
export interface PlacedToolEvent {
  offset: number;
  event: ToolEvent;
}

/**
 * The answer of one run, kept whole while it is produced, pushed to any number of subscribers: a late one
 * gets everything so far at once, then each chunk as it comes, then the end. The producer never waits for
 * a subscriber, and a failing subscriber cannot break the run.
 */
export class LiveBuffer {
  private readonly chunks: string[] = [];
  private length = 0;
  private readonly tools: PlacedToolEvent[] = [];
  private outcome: RunOutcome | undefined;
  private readonly sinks = new Set<AnswerSink>();

  /** How the run ended; undefined while it runs. */
  get ended(): RunOutcome | undefined {
    return this.outcome;
  }

  /** All text so far, in one string. */
  textSoFar(): string {
    if (this.chunks.length > 1)
      this.chunks.splice(0, this.chunks.length, this.chunks.join(''));
    return this.chunks[0] ?? '';
  }

  /** The tool events so far, each with the length of the text before it. */
  toolEventsSoFar(): readonly PlacedToolEvent[] {
    return this.tools;
  }

  append(text: string): void {
    if (this.outcome) return;
    this.chunks.push(text);
    this.length += text.length;
    for (const sink of this.sinks) deliver(() => sink.text(text));
  }

  tool(event: ToolEvent): void {
    if (this.outcome) return;
    this.tools.push({ offset: this.length, event });
    for (const sink of this.sinks) deliver(() => sink.tool?.(event));
  }

  end(outcome: RunOutcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    const sinks = [...this.sinks];
    this.sinks.clear();
    for (const sink of sinks) deliver(() => sink.end(outcome));
  }

  /** Resolves when the run has ended, or after `timeoutMs` at the latest. */
  whenEnded(timeoutMs: number): Promise<void> {
    if (this.outcome) return Promise.resolve();
    return new Promise((resolve) => {
      const sink: AnswerSink = { text: () => undefined, end: () => done() };
      const done = () => {
        clearTimeout(timer);
        this.sinks.delete(sink);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.sinks.add(sink);
    });
  }

  /**
   * Sends what exists now to `sink` before returning, then the rest as it comes. Answers a function that
   * stops the delivery (a no-op once the end was delivered).
   */
  /** What exists now, in order: the text with the tool events in their places (no end). */
  replayTo(sink: Pick<AnswerSink, 'text' | 'tool'>): void {
    for (const event of interleave(this.textSoFar(), this.tools))
      if (event.type === 'text') sink.text(event.text);
      else sink.tool?.(event.event);
  }

  subscribe(sink: AnswerSink): () => void {
    this.replayTo(sink);
    if (this.outcome) {
      sink.end(this.outcome);
      return () => undefined;
    }
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }
}

function deliver(call: () => void): void {
  try {
    call();
  } catch {
    // A subscriber's own failure (a closed response) is the subscriber's business, never the run's.
  }
}
