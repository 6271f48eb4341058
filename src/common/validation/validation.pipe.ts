import {
  ArgumentMetadata,
  ValidationError,
  ValidationPipe,
} from '@nestjs/common';
import { AppError, FieldError } from '../errors/app-error';
import { rawJsonFieldsOf } from './raw-json';

/**
 * The global pipe: DTOs are validated with class-validator, unknown fields are refused (400 naming each),
 * and every problem is reported in `errors[]` as { field, code, message }. Fields marked @RawJson() skip
 * class-transformer and reach the service exactly as sent.
 */
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => toValidationProblem(errors),
    });
  }

  override async transform(
    value: unknown,
    metadata: ArgumentMetadata,
  ): Promise<unknown> {
    // Custom parameter decorators (the caller, the request) are not client input.
    if (metadata.type === 'custom') return value;
    const fields = rawJsonFieldsOf(metadata.metatype);
    const shadowing = shadowingKeys(value, new Set(fields.keys()));
    if (shadowing.length > 0)
      throw validationProblem(
        shadowing.map((field) => ({
          field,
          code: 'unknown_field',
          message: `${field} is not an accepted field`,
        })),
      );
    if (
      fields.size === 0 ||
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value)
    )
      return super.transform(value, metadata);
    const rest: Record<string, unknown> = {
      ...(value as Record<string, unknown>),
    };
    const raw: Record<string, unknown> = {};
    const rawProblems: FieldError[] = [];
    for (const [name, field] of fields) {
      const present = Object.hasOwn(rest, name) && rest[name] !== undefined;
      if (present) raw[name] = rest[name];
      delete rest[name];
      if (!present && field.required)
        rawProblems.push({
          field: name,
          code: 'isDefined',
          message: `${name} is required`,
        });
      const problem = present && field.check ? field.check(raw[name]) : null;
      if (problem)
        rawProblems.push({ field: name, code: 'invalid', message: problem });
    }
    let instance: unknown;
    try {
      instance = await super.transform(rest, metadata);
    } catch (error) {
      if (error instanceof AppError && rawProblems.length > 0)
        throw validationProblem([
          ...(error.options.errors ?? []),
          ...rawProblems,
        ]);
      throw error;
    }
    if (rawProblems.length > 0) throw validationProblem(rawProblems);
    return Object.assign(instance as object, raw);
  }
}

/**
 * Keys that name Object.prototype members (`constructor`, `__proto__`, `prototype`) are never DTO fields,
 * but class-transformer drops them silently instead of letting the whitelist refuse them: find them here,
 * outside raw JSON fields, so they are answered as the unknown fields they are.
 */
const SHADOWING_KEYS = new Set(['constructor', '__proto__', 'prototype']);

function shadowingKeys(value: unknown, rawFields: Set<string>): string[] {
  const found: string[] = [];
  const pending: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (pending.length > 0 && found.length < MAX_REPORTED_ERRORS) {
    const { value: current, path } = pending.pop() as {
      value: unknown;
      path: string;
    };
    if (current === null || typeof current !== 'object') continue;
    for (const key of Object.keys(current)) {
      const field = path ? `${path}.${key}` : key;
      if (!path && rawFields.has(key)) continue;
      if (SHADOWING_KEYS.has(key)) found.push(field);
      else
        pending.push({
          value: (current as Record<string, unknown>)[key],
          path: field,
        });
    }
  }
  return found;
}

export function createValidationPipe(): ValidationPipe {
  return new AppValidationPipe();
}

/** A body with thousands of bad keys must not produce an answer as large as itself. */
const MAX_REPORTED_ERRORS = 50;
const MAX_FIELDS_IN_DETAIL = 10;

export function toValidationProblem(errors: ValidationError[]): AppError {
  return validationProblem(flatten(errors, ''));
}

export function validationProblem(fieldErrors: FieldError[]): AppError {
  const onlyUnknown = fieldErrors.every(
    (error) => error.code === 'unknown_field',
  );
  const label = onlyUnknown ? 'Unknown field' : 'Invalid field';
  const fields = [...new Set(fieldErrors.map((error) => error.field))];
  const detail = `${label}${fields.length > 1 ? 's' : ''}: ${listed(fields)}.`;
  return new AppError('validation_failed', detail, {
    errors: fieldErrors.slice(0, MAX_REPORTED_ERRORS),
  });
}

function listed(fields: string[]): string {
  const shown = fields.slice(0, MAX_FIELDS_IN_DETAIL).join(', ');
  return fields.length > MAX_FIELDS_IN_DETAIL
    ? `${shown} and ${fields.length - MAX_FIELDS_IN_DETAIL} more`
    : shown;
}

function flatten(errors: ValidationError[], prefix: string): FieldError[] {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).map(
      ([constraint, message]) => toFieldError(field, constraint, message),
    );
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

function toFieldError(
  field: string,
  constraint: string,
  message: string,
): FieldError {
  if (constraint === 'whitelistValidation')
    return {
      field,
      code: 'unknown_field',
      message: `${field} is not an accepted field`,
    };
  if (constraint === 'unknownValue')
    return {
      field: field || 'body',
      code: 'invalid_body',
      message: 'the body must be a JSON object',
    };
  return { field, code: constraint, message };
}
