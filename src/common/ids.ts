const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids of stored rows are UUIDs; anything else is answered like an unknown id (404), never a 500. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
