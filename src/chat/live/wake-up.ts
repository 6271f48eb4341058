/**
 * Waits until one of the registered wake-ups fires (true), `timeoutMs` pass or the signal aborts (false).
 * Leaves nothing behind: the timer, the abort listener and the wake-up are all removed on every path.
 */
export function waitForWakeUp(
  wakeUps: Set<() => void>,
  timeoutMs: number | undefined,
  signal?: AbortSignal,
): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const finish = (woken: boolean) => {
      clearTimeout(timer);
      wakeUps.delete(wake);
      signal?.removeEventListener('abort', aborted);
      resolve(woken);
    };
    const wake = () => finish(true);
    const aborted = () => finish(false);
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => finish(false), timeoutMs);
    wakeUps.add(wake);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
