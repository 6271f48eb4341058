import { ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError, FieldError } from '../errors/app-error';

/**
 * The global pipe: DTOs are validated with class-validator, unknown fields are refused (400 naming each),
 * and every problem is reported in `errors[]` as { field, code, message }.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => toValidationProblem(errors),
  });
}

export function toValidationProblem(errors: ValidationError[]): AppError {
  const fieldErrors = flatten(errors, '');
  const unknown = fieldErrors.filter((error) => error.code === 'unknown_field').map((error) => error.field);
  const detail =
    unknown.length === fieldErrors.length && unknown.length > 0
      ? `Unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`
      : `Invalid field${fieldErrors.length > 1 ? 's' : ''}: ${[...new Set(fieldErrors.map((error) => error.field))].join(', ')}.`;
  return new AppError('validation_failed', detail, { errors: fieldErrors });
}

function flatten(errors: ValidationError[], prefix: string): FieldError[] {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).map(([constraint, message]) => toFieldError(field, constraint, message));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

function toFieldError(field: string, constraint: string, message: string): FieldError {
  if (constraint === 'whitelistValidation') return { field, code: 'unknown_field', message: `${field} is not an accepted field` };
  if (constraint === 'unknownValue') return { field: field || 'body', code: 'invalid_body', message: 'the body must be a JSON object' };
  return { field, code: constraint, message };
}
