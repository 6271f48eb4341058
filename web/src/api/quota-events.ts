/** A window event telling the quota badge that credits may have changed (an answer was billed, the plan changed). */
const QUOTA_CHANGED = 'quota-changed';

export function announceQuotaChanged(): void {
  window.dispatchEvent(new Event(QUOTA_CHANGED));
}

/** Calls `listener` on each announcement; answers the unsubscribe. */
export function onQuotaChanged(listener: () => void): () => void {
  window.addEventListener(QUOTA_CHANGED, listener);
  return () => window.removeEventListener(QUOTA_CHANGED, listener);
}
