import { ServerResponse } from 'node:http';
import { ERROR_CODES, ErrorCode } from './error-codes';
import { FieldError } from './app-error';

/** RFC 9457 problem details as this API renders them. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export function problemType(code: ErrorCode): string {
  return `urn:problem-type:${code.replace(/_/g, '-')}`;
}

export function buildProblem(input: {
  code: ErrorCode;
  detail: string;
  requestId: string;
  status?: number;
  errors?: FieldError[];
  extensions?: Record<string, unknown>;
}): ProblemDetails {
  const entry = ERROR_CODES[input.code];
  return {
    ...input.extensions,
    type: problemType(input.code),
    title: entry.title,
    status: input.status ?? entry.status,
    detail: input.detail,
    code: input.code,
    requestId: input.requestId,
    ...(input.errors ? { errors: input.errors } : {}),
  };
}

/** Writes a problem response: its headers, problem+json, never cached, no body for HEAD. */
export function sendProblem(
  res: ServerResponse,
  method: string | undefined,
  body: ProblemDetails,
  headers: Record<string, string> = {},
): void {
  for (const [name, value] of Object.entries(headers))
    res.setHeader(name, value);
  res.statusCode = body.status;
  res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
  res.setHeader('Cache-Control', 'no-store');
  res.end(method === 'HEAD' ? undefined : JSON.stringify(body));
}
