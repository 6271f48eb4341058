import { Allow } from 'class-validator';

/**
 * Free-form JSON fields (a JSON Schema, a Skill's input) must reach the service exactly as they arrived:
 * class-transformer would rebuild them, dropping keys such as `constructor` or `toString` and choking on
 * some shapes. A DTO marks them with @RawJson(); the validation pipe sets them aside before
 * class-transformer runs, checks them with `check`, and puts them back untouched.
 */
export interface RawJsonField {
  required: boolean;
  /** A problem message naming what is wrong with the value, or null when it is acceptable. */
  check?: (value: unknown) => string | null;
}

const FIELDS = new WeakMap<object, Map<string, RawJsonField>>();

export function RawJson(
  options: Partial<RawJsonField> = {},
): PropertyDecorator {
  return (target: object, property: string | symbol) => {
    // Whitelisted for class-validator: the (empty) class field is not an unknown property.
    Allow()(target, property);
    const type = target.constructor;
    const fields = FIELDS.get(type) ?? new Map<string, RawJsonField>();
    fields.set(String(property), {
      required: options.required ?? false,
      check: options.check,
    });
    FIELDS.set(type, fields);
  };
}

/** The raw JSON fields of a DTO class, its parents' included. */
export function rawJsonFieldsOf(type: unknown): Map<string, RawJsonField> {
  const fields = new Map<string, RawJsonField>();
  for (
    let current = type;
    typeof current === 'function' && current !== Function.prototype;
    current = Object.getPrototypeOf(current)
  ) {
    for (const [name, field] of FIELDS.get(current) ?? [])
      if (!fields.has(name)) fields.set(name, field);
  }
  return fields;
}
