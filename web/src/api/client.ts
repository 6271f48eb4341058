import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type User = Schemas['UserDto'];
export type Plan = Schemas['PlanDto'];
export type Problem = Schemas['ProblemDetailsDto'];

/**
 * The only way this client talks to the API: typed from the OpenAPI document (openapi-typescript), same
 * origin, so the session cookie travels and the service's CSRF rules apply as in production.
 */
export const api = createClient<paths>({
  baseUrl: '',
  credentials: 'same-origin',
});

/** What a person reads when a call fails: the problem's detail, never raw JSON or a stack trace. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: { field: string; message: string }[] = [],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** The failure of a response with a problem+json body (or none). */
export function failureOf(response: Response, body: unknown): ApiFailure {
  const problem = (
    typeof body === 'object' && body !== null ? body : {}
  ) as Partial<Problem>;
  const retry = Number(response.headers.get('retry-after'));
  const message =
    problem.detail ??
    problem.title ??
    `The request failed (${response.status}).`;
  const fields = (problem.errors ?? []).map((error) => ({
    field: error.field,
    message: error.message,
  }));
  return new ApiFailure(
    response.status,
    problem.code ?? 'unknown',
    message,
    fields,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}

/** The data of an openapi-fetch result, or its failure thrown. */
export function unwrap<T>(result: {
  data?: T;
  error?: unknown;
  response: Response;
}): T {
  if (result.error !== undefined || !result.response.ok)
    throw failureOf(result.response, result.error);
  return result.data as T;
}

/** A person-readable line for any failure, with when to retry after a rate limit. */
export function describeFailure(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.retryAfterSeconds)
      return `${error.message} Try again in ${error.retryAfterSeconds} s.`;
    return error.message;
  }
  return 'Something went wrong. Check your connection and try again.';
}
