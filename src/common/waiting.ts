/**
 * The waits of the service in one place: a retry with growing delays, and polling until a value is final.
 * Each answers or throws by a deadline; none spins.
 */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `firstMs`, then twice as long each time, up to `maxMs`. */
export function* doublingDelays(
  firstMs: number,
  maxMs: number,
): Generator<number> {
  for (let delayMs = firstMs; ; delayMs = Math.min(delayMs * 2, maxMs))
    yield delayMs;
}

export interface RetryOptions {
  /** The waits between attempts, in order. */
  delays: Iterable<number>;
  /** No attempt starts after this time (ms since the epoch): the last failure is thrown instead. */
  giveUpAt: number;
  /** Whether this failure may pass (an unreachable database); any other is thrown at once. */
  retryable: (error: unknown) => boolean;
  /** Told before each wait, e.g. to log it. */
  onRetry?: (error: unknown, delayMs: number) => void;
}

/** Answers what `attempt` resolves with, trying again after a retryable failure while time is left. */
export async function retrying<T>(
  attempt: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const delays = options.delays[Symbol.iterator]();
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const delay = delays.next();
      if (
        delay.done ||
        !options.retryable(error) ||
        Date.now() + delay.value > options.giveUpAt
      )
        throw error;
      options.onRetry?.(error, delay.value);
      await sleep(delay.value);
    }
  }
}

/** Reads every `intervalMs` until `isFinal` holds or `deadline` (ms since the epoch) passes; answers the last read. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  isFinal: (value: T) => boolean,
  options: { intervalMs: number; deadline: number },
): Promise<T> {
  for (;;) {
    const value = await read();
    if (isFinal(value) || Date.now() >= options.deadline) return value;
    await sleep(options.intervalMs);
  }
}
