import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * At most `max` characters as PostgreSQL's `char_length` counts them (code points): class-validator's
 * MaxLength counts an emoji's variation selector as nothing, so text it accepts can break a CHECK on
 * the column. Strings only; other values are left to the type checks.
 */
export function MaxCodePoints(
  max: number,
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxCodePoints',
      constraints: [max],
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'string' || codePoints(value) <= max,
      },
    },
    options,
  );
}

/** A surrogate pair is one code point; everything else one per UTF-16 unit (lone halves included). */
export function codePoints(text: string): number {
  return text.length - (text.match(SURROGATE_PAIR)?.length ?? 0);
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
