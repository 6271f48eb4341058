import { Readable } from 'node:stream';

/** Where file contents live: a local directory or an S3-compatible bucket, chosen by configuration. */
export interface ObjectStorage {
  readonly driver: 'local' | 's3';
  /** Stores `size` bytes from `body` under `key`; a failed put leaves no object behind. */
  put(key: string, body: Readable, size: number, contentType: string): Promise<void>;
  /** The object's bytes as a stream. */
  read(key: string): Promise<Readable>;
  /** Removes the object; an object that is already gone counts as removed. Throws when it cannot be removed. */
  delete(key: string): Promise<void>;
}

export const OBJECT_STORAGE = Symbol('OBJECT_STORAGE');
