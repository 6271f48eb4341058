import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Request } from 'express';
import { StorageEngine } from 'multer';
import { AppError } from '../../common/errors/app-error';
import { AppLogger } from '../../common/logging/app-logger';
import { ObjectStorage } from '../../infra/storage/object-storage';
import { ContentInspector, FileKind, HEAD_BYTES } from '../file-kind';
import { sanitizeFileName } from '../file-name';

/** What the engine adds to multer's `req.file`: the stored object and what its content turned out to be. */
export interface StoredUpload {
  storageKey: string;
  name: string;
  kind: FileKind;
  mediaType: string;
  size: number;
  sha256: string;
}

export type UploadedFile = Express.Multer.File & StoredUpload;

/** The client went away (or the body broke) mid-file. */
export class UploadInterrupted extends Error {}

type Chunks = AsyncIterator<Buffer>;

/**
 * multer's StorageEngine over the object storage: the file streams straight into the store (local disk
 * or S3) while ContentInspector sniffs its kind, counts and hashes it; nothing is written to a temporary
 * file and nothing is held whole in memory. A refusal found while streaming fails the put (which leaves
 * nothing); one found at the end (a zip that is not a DOCX, UTF-8 cut short) removes the stored object.
 * docs/adr/0043-file-uploads-and-kinds.md
 */
export class ObjectStorageEngine implements StorageEngine {
  constructor(
    private readonly storage: ObjectStorage,
    private readonly log: AppLogger,
    private readonly maxBytes: number,
  ) {}

  _handleFile(
    req: Request,
    file: Express.Multer.File,
    callback: (error?: Error | null, info?: Partial<UploadedFile>) => void,
  ): void {
    this.store(req.user!.id, file).then(
      (stored) => callback(null, stored),
      (error: Error) => callback(error),
    );
  }

  _removeFile(
    _req: Request,
    file: Express.Multer.File,
    callback: (error: Error | null) => void,
  ): void {
    const { storageKey } = file as Partial<UploadedFile>;
    if (!storageKey) return callback(null);
    this.storage.delete(storageKey).then(() => callback(null), callback);
  }

  private async store(
    ownerId: string,
    file: Express.Multer.File,
  ): Promise<StoredUpload> {
    const source = file.stream;
    const chunks = source[Symbol.asyncIterator]() as Chunks;
    try {
      const head = await readHead(chunks);
      const name = sanitizeFileName(file.originalname);
      const inspector = new ContentInspector(
        Buffer.concat(head.chunks),
        name,
        this.maxBytes,
      );
      const storageKey = `${ownerId}/${randomUUID()}`;
      await this.put(
        storageKey,
        Readable.from(
          inspected(head.chunks, head.done ? null : chunks, inspector),
        ),
        inspector.mediaType,
      );
      try {
        return {
          storageKey,
          name,
          kind: inspector.kind,
          mediaType: inspector.mediaType,
          ...(await inspector.finish()),
        };
      } catch (error) {
        await this.removeOrphan(storageKey);
        throw error;
      }
    } finally {
      // Stops reading what is left of a refused file; multer drains the request itself.
      if (!source.readableEnded) void chunks.return?.();
    }
  }

  private async put(
    storageKey: string,
    body: Readable,
    mediaType: string,
  ): Promise<void> {
    try {
      await this.storage.put(storageKey, body, mediaType);
    } catch (error) {
      if (error instanceof AppError || error instanceof UploadInterrupted)
        throw error;
      this.log.error(
        { err: error, driver: this.storage.driver },
        'could not store an uploaded object',
      );
      throw new AppError(
        'storage_unavailable',
        'The file could not be stored right now; nothing was kept. Retry the upload.',
      );
    }
  }

  private async removeOrphan(storageKey: string): Promise<void> {
    await this.storage
      .delete(storageKey)
      .catch((error: unknown) =>
        this.log.error(
          { err: error, storageKey },
          'could not remove a refused upload',
        ),
      );
  }
}

async function readHead(
  chunks: Chunks,
): Promise<{ chunks: Buffer[]; done: boolean }> {
  const head: Buffer[] = [];
  let length = 0;
  while (length < HEAD_BYTES) {
    const next = await nextChunk(chunks);
    if (next.done) return { chunks: head, done: true };
    head.push(next.value);
    length += next.value.length;
  }
  return { chunks: head, done: false };
}

/** The file's bytes as they arrive, each checked by the inspector before it goes on to the store. */
async function* inspected(
  head: Buffer[],
  rest: Chunks | null,
  inspector: ContentInspector,
): AsyncGenerator<Buffer> {
  for (const chunk of head) {
    inspector.update(chunk);
    yield chunk;
  }
  while (rest) {
    const next = await nextChunk(rest);
    if (next.done) return;
    inspector.update(next.value);
    yield next.value;
  }
}

async function nextChunk(chunks: Chunks): Promise<IteratorResult<Buffer>> {
  try {
    return await chunks.next();
  } catch {
    throw new UploadInterrupted('the upload was interrupted');
  }
}
