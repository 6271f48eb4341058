import { Readable } from 'node:stream';

/** Where file contents live: a local directory or an S3-compatible bucket, chosen by configuration. */
export interface ObjectStorage {
  readonly driver: 'local' | 's3';
  /**
   * Stores `body` under `key` as it streams in (its length is not known in advance); a failed put,
   * including one whose body stream fails, leaves no object behind.
   */
  put(key: string, body: Readable, contentType: string): Promise<void>;
  /** The object's bytes as a stream; ObjectMissing when there is none. */
  read(key: string): Promise<Readable>;
  /** Removes the object; an object that is already gone counts as removed. Throws when it cannot be removed. */
  delete(key: string): Promise<void>;
  /** Removes what puts interrupted by a crash left behind, older than `olderThanMs`; answers how many. */
  removeAbandonedPuts(olderThanMs: number): Promise<number>;
}

export const OBJECT_STORAGE = Symbol('OBJECT_STORAGE');

/** `read` of a key that holds no object (never stored, or deleted). */
export class ObjectMissing extends Error {
  constructor(key: string) {
    super(`no object under ${key}`);
  }
}
