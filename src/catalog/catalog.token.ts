/** The catalog file (CATALOG_FILE) as read and checked once at start, for whatever needs it (CatalogModule). */
export const CATALOG = Symbol('CATALOG');
