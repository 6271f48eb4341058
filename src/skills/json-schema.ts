import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import { FieldError } from '../common/errors/app-error';

/** A stored schema (a JSON object or boolean) at most this large once serialized. */
export const MAX_SCHEMA_BYTES = 32 * 1024;
const MAX_REPORTED_ERRORS = 20;
const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * JSON Schema draft 2020-12 with Ajv. One Ajv instance; user schemas are never registered in it (no
 * `$id` collisions between users, no growth), and nothing is ever fetched: a `$ref` must resolve inside
 * the schema itself.
 */
const ajv = new Ajv2020({ allErrors: true, strict: false, addUsedSchema: false, validateFormats: false, logger: false });

/** Problems that make `schema` unusable as a draft 2020-12 JSON Schema, reported under `field`. */
export function schemaProblems(field: string, schema: unknown): FieldError[] {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    return [{ field, code: 'invalid_json_schema', message: `${field} must be a JSON Schema (an object or a boolean)` }];
  }
  if (Buffer.byteLength(JSON.stringify(schema), 'utf8') > MAX_SCHEMA_BYTES) {
    return [{ field, code: 'schema_too_large', message: `${field} must be at most ${MAX_SCHEMA_BYTES} bytes of JSON` }];
  }
  const declared = typeof schema === 'object' ? (schema as Record<string, unknown>).$schema : undefined;
  if (declared !== undefined && declared !== DRAFT_2020_12 && declared !== `${DRAFT_2020_12}#`) {
    return [{ field, code: 'invalid_json_schema', message: `${field}.$schema must be ${DRAFT_2020_12} (draft 2020-12) or absent` }];
  }
  if (!ajv.validateSchema(schema as object)) return toFieldErrors(field, ajv.errors ?? []);
  try {
    compile(schema);
    return [];
  } catch (error) {
    return [{ field, code: 'invalid_json_schema', message: `${field}: ${error instanceof Error ? error.message.split('\n')[0] : 'cannot be compiled'}` }];
  }
}

/** Validation errors of `value` against a schema already accepted by schemaProblems(). */
export function valueProblems(field: string, schema: unknown, value: unknown, cacheKey: string): FieldError[] {
  const validate = cachedValidator(cacheKey, schema);
  return validate(value) ? [] : toFieldErrors(field, validate.errors ?? []);
}

/** Versions never change, so a compiled validator can be kept by version id; bounded, oldest dropped. */
const validators = new Map<string, ValidateFunction>();
const MAX_CACHED_VALIDATORS = 500;

function cachedValidator(key: string, schema: unknown): ValidateFunction {
  const cached = validators.get(key);
  if (cached) return cached;
  const validate = compile(schema);
  if (validators.size >= MAX_CACHED_VALIDATORS) validators.delete(validators.keys().next().value as string);
  validators.set(key, validate);
  return validate;
}

function compile(schema: unknown): ValidateFunction {
  const validate = ajv.compile(schema as object);
  // Ajv also caches object schemas; the validator above is all we keep.
  if (typeof schema === 'object') ajv.removeSchema(schema as object);
  return validate;
}

function toFieldErrors(field: string, errors: ErrorObject[]): FieldError[] {
  return errors.slice(0, MAX_REPORTED_ERRORS).map((error) => {
    const path = error.instancePath
      .split('/')
      .slice(1)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
    return { field: [field, ...path].join('.'), code: error.keyword, message: `${[field, ...path].join('.')} ${error.message ?? 'is invalid'}` };
  });
}
