import { PagedArray } from './json-stream.writer';

/** Rows per query: small enough that a page of long messages stays a few MB, large enough to keep round trips few. */
export const EXPORT_PAGE_SIZE = 200;

/** Reads up to `limit` rows that come after `after` (undefined: from the start) in a fixed, unique order. */
export type PageReader<Row, Key> = (
  after: Key | undefined,
  limit: number,
) => Promise<Row[]>;

/**
 * A collection read by keyset pagination: each query continues after the key of the last row seen, so a row
 * is exported at most once even while the account changes, and no query gets slower as the export advances
 * (unlike OFFSET). A short page is the last one.
 */
export function keysetArray<Row, Key, Item>(
  read: PageReader<Row, Key>,
  keyOf: (row: Row) => Key,
  toItem: (row: Row) => Item,
  pageSize = EXPORT_PAGE_SIZE,
): PagedArray<Item> {
  return new PagedArray(async function* () {
    let after: Key | undefined;
    for (;;) {
      const rows = await read(after, pageSize);
      if (rows.length > 0) yield rows.map(toItem);
      const last = rows.at(-1);
      if (rows.length < pageSize || last === undefined) return;
      after = keyOf(last);
    }
  });
}
