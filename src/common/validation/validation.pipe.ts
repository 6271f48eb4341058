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

/** A body with thousands of bad keys must not produce an answer as large as itself. */
const MAX_REPORTED_ERRORS = 50;
const MAX_FIELDS_IN_DETAIL = 10;

export function toValidationProblem(errors: ValidationError[]): AppError {
  const fieldErrors = flatten(errors, '');
  const onlyUnknown = fieldErrors.every((error) => error.code === 'unknown_field');
  const label = onlyUnknown ? 'Unknown field' : 'Invalid field';
  const fields = [...new Set(fieldErrors.map((error) => error.field))];
  const detail = `${label}${fields.length > 1 ? 's' : ''}: ${listed(fields)}.`;
  return new AppError('validation_failed', detail, { errors: fieldErrors.slice(0, MAX_REPORTED_ERRORS) });
}

function listed(fields: string[]): string {
  const shown = fields.slice(0, MAX_FIELDS_IN_DETAIL).join(', ');
  return fields.length > MAX_FIELDS_IN_DETAIL ? `${shown} and ${fields.length - MAX_FIELDS_IN_DETAIL} more` : shown;
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
