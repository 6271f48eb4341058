/**
 * `work`, or a rejection with `message` after `ms` if it has not settled by then. The work itself is not
 * stopped (use an AbortSignal where the callee takes one); its late outcome is ignored.
 */
export function withTimeout<T>(
  work: Promise<T>,
  ms: number,
  message: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
