/**
 * Resolves once `condition` answers true, polling every `pollMs`; a condition that throws (or rejects) counts
 * as not yet (a server still coming back). Rejects after `timeoutMs`. The condition may answer at once.
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await holds(condition)) return;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function holds(
  condition: () => boolean | Promise<boolean>,
): Promise<boolean> {
  try {
    return await condition();
  } catch {
    return false;
  }
}
