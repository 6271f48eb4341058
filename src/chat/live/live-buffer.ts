import { RunOutcome } from './live-event';

/** Receives an answer: its text in order from the first byte, then one end. */
export interface AnswerSink {
  text(chunk: string): void;
  end(outcome: RunOutcome): void;
}

/**
 * The answer of one run, kept whole while it is produced, pushed to any number of subscribers: a late one
 * gets everything so far at once, then each chunk as it comes, then the end. The producer never waits for
 * a subscriber, and a failing subscriber cannot break the run.
 */
export class LiveBuffer {
  private readonly chunks: string[] = [];
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

  append(text: string): void {
    if (this.outcome) return;
    this.chunks.push(text);
    for (const sink of this.sinks) deliver(() => sink.text(text));
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
  subscribe(sink: AnswerSink): () => void {
    const text = this.textSoFar();
    if (text) sink.text(text);
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
