import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import type { FieldError } from '../common/errors/app-error';

/**
 * JSON Schema draft 2020-12 with Ajv, as pure functions. User schemas are untrusted: the service runs
 * these in a worker thread with a time and memory budget (json-schema.worker.ts); the checks here keep
 * the common abuses out before Ajv generates any code.
 */

/** A stored schema (a JSON object or boolean) at most this large once serialized. */
export const MAX_SCHEMA_BYTES = 32 * 1024;
/** Objects and arrays in one schema; with `$ref`s this bounds the code Ajv generates. */
export const MAX_SCHEMA_NODES = 2_000;
const MAX_REPORTED_ERRORS = 20;
const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
/** `$async` makes Ajv return a promise instead of a verdict: never wanted here. */
const REFUSED_KEYWORDS = new Set(['$async']);

const OPTIONS = {
  allErrors: true,
  strict: false,
  // User schemas are never registered anywhere (no `$id` collisions between users).
  addUsedSchema: false,
  validateFormats: false,
  logger: false as const,
  // Referenced subschemas become functions instead of being copied into every place that refers to them.
  inlineRefs: false,
  // `required: ["constructor"]` must not be satisfied by Object.prototype.
  ownProperties: true,
};

/** Only checks schemas against the meta-schema; compiling happens on a fresh instance each time. */
const metaValidator = new Ajv2020(OPTIONS);

/** Problems that make `schema` unusable as a draft 2020-12 JSON Schema, reported under `field`. */
export function schemaProblems(field: string, schema: unknown): FieldError[] {
  if (
    typeof schema !== 'boolean' &&
    (typeof schema !== 'object' || schema === null || Array.isArray(schema))
  ) {
    return [
      {
        field,
        code: 'invalid_json_schema',
        message: `${field} must be a JSON Schema (an object or a boolean)`,
      },
    ];
  }
  if (Buffer.byteLength(JSON.stringify(schema), 'utf8') > MAX_SCHEMA_BYTES) {
    return [
      {
        field,
        code: 'schema_too_large',
        message: `${field} must be at most ${MAX_SCHEMA_BYTES} bytes of JSON`,
      },
    ];
  }
  const shapeProblem = structureProblem(field, schema);
  if (shapeProblem) return [shapeProblem];
  const declared =
    typeof schema === 'object'
      ? (schema as Record<string, unknown>).$schema
      : undefined;
  if (
    declared !== undefined &&
    declared !== DRAFT_2020_12 &&
    declared !== `${DRAFT_2020_12}#`
  ) {
    return [
      {
        field,
        code: 'invalid_json_schema',
        message: `${field}.$schema must be ${DRAFT_2020_12} (draft 2020-12) or absent`,
      },
    ];
  }
  try {
    if (!metaValidator.validateSchema(schema))
      return toFieldErrors(field, metaValidator.errors ?? []);
    compile(schema);
    return [];
  } catch (error) {
    return [
      {
        field,
        code: 'invalid_json_schema',
        message: `${field}: ${error instanceof Error ? error.message.split('\n')[0] : 'cannot be compiled'}`,
      },
    ];
  }
}

/** Validation errors of `value` against a schema accepted by schemaProblems(). */
export function valueProblems(
  field: string,
  schema: unknown,
  value: unknown,
  cacheKey: string,
): FieldError[] {
  const validate = cachedValidator(cacheKey, schema);
  const valid = validate(value);
  if (valid === true) return [];
  if (valid !== false)
    return [
      {
        field,
        code: 'invalid_json_schema',
        message: `${field} cannot be checked: the input_schema is asynchronous`,
      },
    ];
  return toFieldErrors(field, validate.errors ?? []);
}

/** Walks the schema once: too many nodes, a refused keyword or a number JSON cannot carry. */
function structureProblem(field: string, schema: unknown): FieldError | null {
  const pending: { value: unknown; path: string }[] = [
    { value: schema, path: field },
  ];
  let nodes = 0;
  while (pending.length > 0) {
    const { value, path } = pending.pop() as { value: unknown; path: string };
    if (typeof value === 'number' && !Number.isFinite(value))
      return {
        field: path,
        code: 'invalid_json_schema',
        message: `${path} must be a finite number`,
      };
    if (value === null || typeof value !== 'object') continue;
    nodes += 1;
    if (nodes > MAX_SCHEMA_NODES)
      return {
        field,
        code: 'schema_too_complex',
        message: `${field} may hold at most ${MAX_SCHEMA_NODES} objects and arrays`,
      };
    for (const [key, child] of Object.entries(value)) {
      if (!Array.isArray(value) && REFUSED_KEYWORDS.has(key))
        return {
          field: `${path}.${key}`,
          code: 'invalid_json_schema',
          message: `${path}.${key} is not supported`,
        };
      pending.push({ value: child, path: `${path}.${key}` });
    }
  }
  return null;
}

/** Versions never change, so a compiled validator can be kept by version id; bounded, oldest dropped. */
const validators = new Map<string, ValidateFunction>();
const MAX_CACHED_VALIDATORS = 200;

function cachedValidator(key: string, schema: unknown): ValidateFunction {
  const cached = validators.get(key);
  if (cached) return cached;
  const validate = compile(schema);
  if (validators.size >= MAX_CACHED_VALIDATORS)
    validators.delete(validators.keys().next().value as string);
  validators.set(key, validate);
  return validate;
}

/** A fresh Ajv per schema: nothing a user schema declares ($id, $anchor) can reach another schema. */
function compile(schema: unknown): ValidateFunction {
  return new Ajv2020(OPTIONS).compile(schema as object);
}

function toFieldErrors(field: string, errors: ErrorObject[]): FieldError[] {
  return errors.slice(0, MAX_REPORTED_ERRORS).map((error) => {
    const path = error.instancePath
      .split('/')
      .slice(1)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
    const where = [field, ...path].join('.');
    return {
      field: where,
      code: error.keyword,
      message: `${where} ${error.message ?? 'is invalid'}`,
    };
  });
}
