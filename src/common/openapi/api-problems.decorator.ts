import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ProblemDetailsDto } from './problem-details.dto';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: malformed JSON, a failed validation or an unknown field.',
  401: 'No valid session cookie.',
  403: 'Not allowed for this account, or a cross-site request.',
  404: 'Not found, or not owned by the caller.',
  405: 'The path exists but not with this method (see the Allow header).',
  409: 'Conflicts with the current state.',
  413: 'The request body is too large.',
  415: 'The request body has an unsupported type.',
  422: 'Well formed but semantically refused.',
  429: 'Rate limit or quota exceeded (see the Retry-After header).',
  500: 'Unexpected server error (generic body; the log has the detail under the same requestId).',
  502: 'The upstream provider failed.',
  503: 'A dependency is not configured or not available.',
};

const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer' as const },
  },
};

const PROBLEM_SCHEMA_REF = '#/components/schemas/ProblemDetailsDto';

/** The OpenAPI response object of an error status: application/problem+json with the ProblemDetails schema. */
export function problemResponse(
  status: number,
  extraProperties?: Record<string, { $ref: string }>,
) {
  const schema = extraProperties
    ? {
        allOf: [
          { $ref: PROBLEM_SCHEMA_REF },
          { type: 'object' as const, properties: extraProperties },
        ],
      }
    : { $ref: PROBLEM_SCHEMA_REF };
  return {
    description: DESCRIPTIONS[status] ?? 'Error.',
    content: { 'application/problem+json': { schema } },
    ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
  };
}

/** Documents error responses of an operation (the statuses every operation can answer are added globally). */
export function ApiProblems(
  ...statuses: number[]
): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, ...problemResponse(status) }),
    ),
  );
}

export { ProblemDetailsDto };
