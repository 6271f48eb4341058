/** A half of a UTF-16 surrogate pair without its other half. */
export const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The text with each lone surrogate as U+FFFD, as PostgreSQL stores it from a text parameter (a `jsonb`
 * parameter refuses it instead).
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/** Text PostgreSQL can store in `text` and `jsonb` alike: well formed, without NUL (which neither holds). */
export function storableText(text: string): string {
  return wellFormed(
    text.includes('\u0000') ? text.replaceAll('\u0000', '') : text,
  );
}

/** A JSON value whose every string, keys included, is storable text. */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        storableText(key),
        storableJson(item),
      ]),
    );
  return value;
}
