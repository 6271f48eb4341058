import { ApiFailure, describeFailure } from '../../api/client';

/** A refusal before the first byte, with the quota's reset time when the problem names it. */
export class TurnFailure extends ApiFailure {
  constructor(
    base: ApiFailure,
    readonly resetsAt?: string,
  ) {
    super(
      base.status,
      base.code,
      base.message,
      base.fields,
      base.retryAfterSeconds,
    );
  }
}

/**
 * What a person reads when an answer could not start: the quota, a rate limit and provider failures in plain
 * words. `orgName`: the organization whose pool was to pay.
 */
export function describeChatFailure(error: unknown, orgName?: string): string {
  if (error instanceof ApiFailure) {
    if (error.code === 'org_plan_required')
      return `${orgName ?? 'The organization'} has no paid plan, so no credit pool to pay for this: an admin or owner buys seats on its Organization page. Switch to Personal to use your own credits.`;
    if (error.code === 'quota_exceeded') {
      const resetsAt =
        error instanceof TurnFailure && error.resetsAt
          ? new Date(error.resetsAt)
          : error.retryAfterSeconds
            ? new Date(Date.now() + error.retryAfterSeconds * 1000)
            : undefined;
      const when =
        resetsAt && !Number.isNaN(resetsAt.getTime())
          ? ` They reset at ${resetsAt.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })} (${fromNow(resetsAt)}).`
          : '';
      return orgName
        ? `${orgName}'s credit pool, or your own daily cap in it, is used up for today.${when} An admin can raise your cap or buy more seats.`
        : `You have used up today's credits.${when} A bigger plan gives more credits per day.`;
    }
    if (
      error.code === 'rate_limited' ||
      (error.status === 429 && error.retryAfterSeconds)
    ) {
      return `Too many requests right now. Try again in ${error.retryAfterSeconds ?? 1} s.`;
    }
    if (
      ['provider_error', 'provider_timeout', 'generation_interrupted'].includes(
        error.code,
      )
    ) {
      return `${error.message.replace(/\s*Send a new idempotencyKey to try again\.?/, '')} You can send it again.`;
    }
  }
  return describeFailure(error);
}

function fromNow(date: Date): string {
  const minutes = Math.max(
    1,
    Math.round((date.getTime() - Date.now()) / 60_000),
  );
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return `in ${hours} h ${minutes % 60} min`;
}
