/** Why a webhook signature was refused; every one of them is a 400 that changes nothing. */
export type SignatureProblem = 'missing' | 'malformed' | 'mismatch' | 'stale';

export const SIGNATURE_PROBLEM_DETAIL: Record<
  SignatureProblem,
  (header: string, toleranceSeconds: number) => string
> = {
  missing: (header) => `The ${header} header is missing.`,
  malformed: (header) =>
    `The ${header} header is not in the provider's format.`,
  mismatch: (header) =>
    `No signature in ${header} matches the body and the configured secret.`,
  stale: (header, tolerance) =>
    `The ${header} timestamp is more than ${tolerance} s away from now; a replay is refused.`,
};

/** Whether a signature timestamp (seconds) is further than `toleranceSeconds` from `now`, in either direction. */
export function isStale(
  timestampSeconds: number,
  now: Date,
  toleranceSeconds: number,
): boolean {
  return (
    Math.abs(Math.floor(now.getTime() / 1000) - timestampSeconds) >
    toleranceSeconds
  );
}
