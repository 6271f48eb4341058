import { ERROR_CODES, ErrorCode } from './error-codes';

/** One problem with one field of the request (`field` is a dotted path such as `messages.0.role`). */
export interface FieldError {
  field: string;
  code: string;
  message: string;
}

export interface AppErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Extra problem members (RFC 9457 extensions), e.g. `{ retryAfterSeconds: 30 }`. */
  extensions?: Record<string, unknown>;
}

/** A domain error with a stable code. Thrown by services; rendered as problem+json by the global filter. */
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: AppErrorOptions = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.status = ERROR_CODES[code].status;
  }
}
