import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  NotFoundException,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Application, Request, Response } from 'express';
import { Logger } from '../logging/logger';
import { requestContext } from '../logging/request-context';
import { BodyReadError, MAX_JSON_DEPTH } from '../http/body-parsers';
import { allowedMethodsFor } from '../http/route-table';
import { AppError, FieldError } from './app-error';
import { isDatabaseUnavailable } from './database-unavailable';
import { codeForStatus, ErrorCode } from './error-codes';
import { buildProblem, sendProblem } from './problem-details';

interface Rendered {
  problem: {
    code: ErrorCode;
    status: number;
    detail: string;
    errors?: FieldError[];
  };
  headers?: Record<string, string>;
  extensions?: Record<string, unknown>;
}

/**
 * The one place errors become HTTP responses: every error is RFC 9457 problem+json with a stable code
 * and the request id. Anything unexpected is a generic 500; its detail only goes to the log.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly log: Logger,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const requestId = String(
      req.id ?? requestContext.getStore()?.requestId ?? 'unknown',
    );
    const rendered = this.render(exception, req);
    if (!(exception instanceof AppError) && rendered.problem.status >= 500) {
      (requestContext.getStore()?.log ?? this.log.child({ requestId })).error(
        { err: exception },
        'unhandled error',
      );
    }
    if (res.headersSent) {
      // A streamed response already started: the only honest signal left is an abnormal end.
      res.destroy();
      return;
    }
    sendProblem(
      res,
      req.method,
      buildProblem({
        ...rendered.problem,
        requestId,
        extensions: rendered.extensions,
      }),
      rendered.headers,
    );
  }

  private render(exception: unknown, req: Request): Rendered {
    if (exception instanceof AppError) {
      return {
        problem: {
          code: exception.code,
          status: exception.status,
          detail: exception.detail,
          errors: exception.options.errors,
        },
        headers: exception.options.headers,
        extensions: exception.options.extensions,
      };
    }
    if (exception instanceof NotFoundException)
      return this.renderUnknownRoute(req);
    if (exception instanceof HttpException)
      return this.renderHttpException(exception);
    if (exception instanceof BodyReadError)
      return renderBodyReadError(exception);
    if (isDatabaseUnavailable(exception)) {
      return {
        problem: {
          code: 'service_unavailable',
          status: 503,
          detail: 'The database is not available right now. Try again shortly.',
        },
        headers: { 'Retry-After': '5' },
      };
    }
    return {
      problem: {
        code: 'internal_error',
        status: 500,
        detail:
          'An unexpected error occurred. Quote the requestId when reporting it.',
      },
    };
  }

  /** Nest raises a bare NotFoundException only when no route matched (our own code throws AppError). */
  private renderUnknownRoute(req: Request): Rendered {
    const app = this.adapterHost.httpAdapter.getInstance<Application>();
    const allowed = allowedMethodsFor(app, req.path);
    if (allowed.length > 0) {
      return {
        problem: {
          code: 'method_not_allowed',
          status: 405,
          detail: `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}.`,
        },
        headers: { Allow: allowed.join(', ') },
      };
    }
    return {
      problem: {
        code: 'route_not_found',
        status: 404,
        detail: `There is no route ${req.method} ${req.path}.`,
      },
    };
  }

  private renderHttpException(exception: HttpException): Rendered {
    const status = exception.getStatus();
    const code = codeForStatus(status);
    const detail =
      status >= 500
        ? 'The service could not handle the request.'
        : messageOf(exception);
    return { problem: { code, status, detail } };
  }
}

function renderBodyReadError(error: BodyReadError): Rendered {
  const fixed: Record<string, Rendered['problem']> = {
    'entity.parse.failed': {
      code: 'malformed_json',
      status: 400,
      detail: 'The request body is not valid JSON.',
    },
    'entity.too.large': {
      code: 'payload_too_large',
      status: 413,
      detail: 'The request body is larger than the limit for this endpoint.',
    },
    'entity.too.deep': {
      code: 'bad_request',
      status: 400,
      detail: `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`,
    },
    'entity.nul.character': {
      code: 'bad_request',
      status: 400,
      detail: 'The JSON body contains a NUL (\\u0000) character.',
    },
    'entity.number.out.of.range': {
      code: 'bad_request',
      status: 400,
      detail:
        'The JSON body holds a number too large to represent (such as 1e400).',
    },
    'entity.lone.surrogate': {
      code: 'bad_request',
      status: 400,
      detail:
        'The JSON body contains text that is not valid Unicode (a lone surrogate).',
    },
    'entity.unsupported.type': {
      code: 'unsupported_media_type',
      status: 415,
      detail: 'Request bodies must be application/json.',
    },
    'encoding.unsupported': {
      code: 'unsupported_media_type',
      status: 415,
      detail: 'The request body encoding is not supported.',
    },
    'charset.unsupported': {
      code: 'unsupported_media_type',
      status: 415,
      detail: 'The request body charset is not supported; use UTF-8.',
    },
  };
  if (fixed[error.type]) return { problem: fixed[error.type] };
  const status = error.status >= 400 && error.status < 500 ? error.status : 400;
  return {
    problem: {
      code: codeForStatus(status),
      status,
      detail: 'The request body could not be read.',
    },
  };
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}
