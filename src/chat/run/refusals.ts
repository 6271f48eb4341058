import { AppError } from '../../common/errors/app-error';
import { nextUtcMidnight } from '../../common/utc-day';

/** Why a run is refused before anything is claimed or billed (the key stays unused). */

export function unknownModel(modelId: string): AppError {
  return new AppError(
    'unknown_model',
    `There is no model "${modelId}"; GET /v1/plans lists the models of each plan.`,
    {
      errors: [
        {
          field: 'model',
          code: 'unknown_model',
          message: 'model must be the id of a catalog model',
        },
      ],
    },
  );
}

/** 403: the paying plan (the caller's, or the organization's for a run its pool pays) lacks the model. */
export function modelNotAllowed(
  modelId: string,
  plan: { planCode: string; organizationId?: string },
): AppError {
  const whose = plan.organizationId ? "The organization's plan" : 'Your plan';
  return new AppError(
    'model_not_allowed',
    `${whose} (${plan.planCode}) does not include ${modelId}.`,
  );
}

/** 429 with Retry-After to the next UTC midnight, when today's quota is reset. */
export function quotaExceeded(reservedCredits: number, now: Date): AppError {
  return untilMidnight(
    `This request may cost up to ${reservedCredits} credits, more than remain of today's quota ` +
      `(GET /v1/billing/quota).`,
    now,
  );
}

/** 429: the organization's pool has not enough left today (docs/adr/0062-organizations.md). */
export function poolExhausted(reservedCredits: number, now: Date): AppError {
  return untilMidnight(
    `This request may cost up to ${reservedCredits} credits, more than remain of the organization's pool ` +
      `today (GET /v1/orgs/:id/quota).`,
    now,
  );
}

/** 429: the member's own daily cap in the organization's pool is reached. */
export function memberCapReached(reservedCredits: number, now: Date): AppError {
  return untilMidnight(
    `This request may cost up to ${reservedCredits} credits, more than remain of your daily cap in the ` +
      `organization's pool (GET /v1/orgs/:id/quota).`,
    now,
  );
}

function untilMidnight(why: string, now: Date): AppError {
  const resetsAt = nextUtcMidnight(now);
  const seconds = Math.max(
    1,
    Math.ceil((resetsAt.getTime() - now.getTime()) / 1000),
  );
  return new AppError(
    'quota_exceeded',
    `${why} The quota resets at ${resetsAt.toISOString()}.`,
    {
      headers: { 'Retry-After': String(seconds) },
      extensions: { resetsAt: resetsAt.toISOString() },
    },
  );
}
