/**
 * Resolves once `condition` answers true, polling every `pollMs`; a condition that throws counts as not yet
 * (a server still coming back). Rejects after `timeoutMs`.
 */
export async function eventually(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  pollMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
