import { Readable } from 'node:stream';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { AppLogger } from '../common/logging/app-logger';
import {
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  PageQueryDto,
  toPage,
} from '../common/pagination';
import {
  OBJECT_STORAGE,
  ObjectMissing,
  ObjectStorage,
} from '../infra/storage/object-storage';
import { FileDto, FilePageDto } from './dto/file.response';
import { TextExtractionService } from './extraction/text-extraction.service';
import { FilesRepository } from './files.repository';
import { StoredUpload } from './upload/object-storage.engine';

/** A file record as the repository answers it (its FILE selection). */
type FileRow = NonNullable<Awaited<ReturnType<FilesRepository['findOwned']>>>;

/** A stored file's bytes, to be sent as they are. */
export interface FileContent {
  name: string;
  mediaType: string;
  sizeBytes: number;
  body: Readable;
}

/** Temporary uploads older than this were left by a crashed process (an upload takes seconds). */
const STALE_UPLOAD_MS = 60 * 60 * 1000;

@Injectable()
export class FilesService implements OnModuleInit {
  constructor(
    private readonly files: FilesRepository,
    @Inject(OBJECT_STORAGE) private readonly storage: ObjectStorage,
    private readonly log: AppLogger,
    private readonly extraction: TextExtractionService,
  ) {}

  /** Removes what uploads cut short by a crashed process left in the storage (other instances' recent ones are kept). */
  async onModuleInit(): Promise<void> {
    const removed = await this.storage.removeAbandonedPuts(STALE_UPLOAD_MS);
    if (removed > 0) this.log.info({ removed }, 'removed abandoned uploads');
  }

  /**
   * Records an upload the storage engine has stored and inspected, within the plan's storage quota
   * (checked by the insert itself, so uploads finishing together cannot both pass). An object without
   * its record is removed again.
   */
  async store(user: SessionUser, upload: StoredUpload): Promise<FileDto> {
    const row = await this.files
      .insertWithinQuota({
        ownerId: user.id,
        storageKey: upload.storageKey,
        originalName: upload.name,
        kind: upload.kind,
        mediaType: upload.mediaType,
        sizeBytes: upload.size,
        sha256: upload.sha256,
      })
      .catch(async (error: unknown) => {
        await this.removeOrphan(upload.storageKey);
        throw error;
      });
    if (!row) {
      await this.removeOrphan(upload.storageKey);
      throw this.quotaExceeded(upload.size);
    }
    this.extraction.kick();
    return toDto(row);
  }

  async get(user: SessionUser, id: string): Promise<FileDto> {
    const row = isUuid(id) ? await this.files.findOwned(user.id, id) : null;
    if (!row) throw notFound();
    return toDto(row);
  }

  /** The original bytes as a stream from the object storage (local disk or S3), never whole in memory. */
  async content(user: SessionUser, id: string): Promise<FileContent> {
    const file = isUuid(id)
      ? await this.files.findOwnedObject(user.id, id)
      : null;
    if (!file) throw notFound();
    try {
      return {
        name: file.originalName,
        mediaType: file.mediaType,
        sizeBytes: file.sizeBytes,
        body: await this.storage.read(file.storageKey),
      };
    } catch (error) {
      // The object went first in a deletion that did not finish: the file is as good as deleted.
      if (error instanceof ObjectMissing) throw notFound();
      this.log.error(
        { err: error, driver: this.storage.driver },
        'could not read a stored object',
      );
      throw new AppError(
        'storage_unavailable',
        'The file cannot be read right now. Retry the request.',
      );
    }
  }

  async list(user: SessionUser, query: PageQueryDto): Promise<FilePageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.files.findPageOfOwner(
      user.id,
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.createdAt, id: row.id }),
      toDto,
    );
  }

  /**
   * Object first, then the record: if the object cannot be removed the record stays and the call fails
   * (503), so a retry completes it. Once the record is gone, the file is a 404.
   */
  async delete(user: SessionUser, id: string): Promise<void> {
    const file = isUuid(id)
      ? await this.files.findOwnedStorageKey(user.id, id)
      : null;
    if (!file) throw notFound();
    try {
      await this.storage.delete(file.storageKey);
    } catch (error) {
      this.log.error(
        { err: error, fileId: file.id, driver: this.storage.driver },
        'could not delete a stored object',
      );
      throw new AppError(
        'storage_unavailable',
        'The file could not be deleted right now; nothing was changed. Retry the request.',
      );
    }
    await this.files.deleteOwned(user.id, file.id);
  }

  private quotaExceeded(size: number): AppError {
    return new AppError(
      'storage_quota_exceeded',
      `This file (${size} bytes) does not fit in the storage your plan includes. Delete files or upgrade the plan.`,
    );
  }

  private async removeOrphan(storageKey: string): Promise<void> {
    await this.storage
      .delete(storageKey)
      .catch((error: unknown) =>
        this.log.error(
          { err: error, storageKey },
          'could not remove an object without a record',
        ),
      );
  }
}

function notFound(): AppError {
  return new AppError('not_found', 'No such file.');
}

function toDto(row: FileRow): FileDto {
  return {
    id: row.id,
    name: row.originalName,
    kind: row.kind,
    mediaType: row.mediaType,
    sizeBytes: row.sizeBytes,
    sha256: row.sha256,
    createdAt: row.createdAt.toISOString(),
    text: {
      status: row.textStatus,
      chars: row.textChars,
      pages: row.textPages,
      error: row.textError,
    },
  };
}
