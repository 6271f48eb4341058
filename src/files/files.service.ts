import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { decodeCursor, DEFAULT_PAGE_SIZE, PageQueryDto, toPage } from '../common/pagination';
import { OBJECT_STORAGE, ObjectStorage } from '../infra/storage/object-storage';
import { FileDto, FilePageDto } from './dto/file.response';
import { detectKind, FileKind, MEDIA_TYPES } from './file-kind';
import { sanitizeFileName } from './file-name';
import { FilesRepository } from './files.repository';
import { ReceivedFile } from './multipart-upload';

/** 20 MiB, the contract's upload limit. */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

type FileRow = { id: string; originalName: string; kind: FileKind; mediaType: string; sizeBytes: number; sha256: string; createdAt: Date };

/** Temporary uploads older than this were left by a crashed process (an upload takes seconds). */
const STALE_UPLOAD_MS = 60 * 60 * 1000;

@Injectable()
export class FilesService implements OnModuleInit {
  /** Where uploads are streamed before they are checked and stored. */
  readonly tempDir: string;

  constructor(
    private readonly files: FilesRepository,
    @Inject(OBJECT_STORAGE) private readonly storage: ObjectStorage,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly log: AppLogger,
  ) {
    this.tempDir = join(config.storage.dir, '.uploads');
  }

  /** Removes temporary uploads a crashed process left behind (other instances' recent ones are kept). */
  async onModuleInit(): Promise<void> {
    const names = await readdir(this.tempDir).catch(() => [] as string[]);
    const now = Date.now();
    let removed = 0;
    for (const name of names) {
      const path = join(this.tempDir, name);
      const info = await stat(path).catch(() => null);
      if (info && now - info.mtimeMs > STALE_UPLOAD_MS) {
        await rm(path, { force: true, recursive: true });
        removed += 1;
      }
    }
    if (removed > 0) this.log.info({ removed }, 'removed stale temporary uploads');
  }

  /**
   * Keeps an uploaded file: kind from its content, object under a generated key, then the record (within
   * the storage quota). The temporary file is always removed; an object whose record could not be written
   * is removed again.
   */
  async store(user: SessionUser, upload: ReceivedFile): Promise<FileDto> {
    try {
      if (upload.size === 0) throw new AppError('validation_failed', 'The file is empty.', { errors: [{ field: 'file', code: 'empty_file', message: 'file must not be empty' }] });
      const name = sanitizeFileName(upload.originalName);
      const kind = await detectKind(upload.tempPath, name);
      await this.assertFits(user, upload.size);
      const storageKey = `${user.id}/${randomUUID()}`;
      await this.put(storageKey, upload, MEDIA_TYPES[kind]);
      const row = await this.files
        .insertWithinQuota({ ownerId: user.id, storageKey, originalName: name, kind, mediaType: MEDIA_TYPES[kind], sizeBytes: upload.size, sha256: upload.sha256 })
        .catch(async (error: unknown) => {
          await this.removeOrphan(storageKey);
          throw error;
        });
      if (!row) {
        await this.removeOrphan(storageKey);
        throw this.quotaExceeded(upload.size);
      }
      return toDto(row);
    } finally {
      await rm(upload.tempPath, { force: true });
    }
  }

  async list(user: SessionUser, query: PageQueryDto): Promise<FilePageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.files.findPageOfOwner(user.id, limit, query.cursor ? decodeCursor(query.cursor) : undefined);
    return toPage(rows, limit, (row) => ({ at: row.createdAt, id: row.id }), toDto);
  }

  /**
   * Object first, then the record: if the object cannot be removed the record stays and the call fails
   * (503), so a retry completes it. Once the record is gone, the file is a 404.
   */
  async delete(user: SessionUser, id: string): Promise<void> {
    const file = isUuid(id) ? await this.files.findOwnedStorageKey(user.id, id) : null;
    if (!file) throw new AppError('not_found', 'No such file.');
    try {
      await this.storage.delete(file.storageKey);
    } catch (error) {
      this.log.error({ err: error, fileId: file.id, driver: this.storage.driver }, 'could not delete a stored object');
      throw new AppError('storage_unavailable', 'The file could not be deleted right now; nothing was changed. Retry the request.');
    }
    await this.files.deleteOwned(user.id, file.id);
  }

  /** An early refusal before anything is stored; insertWithinQuota() is the check that holds under races. */
  private async assertFits(user: SessionUser, size: number): Promise<void> {
    const storage = await this.files.storageOf(user.id);
    if (storage && storage.used + size > storage.quota) throw this.quotaExceeded(size);
  }

  private quotaExceeded(size: number): AppError {
    return new AppError('storage_quota_exceeded', `This file (${size} bytes) does not fit in the storage your plan includes. Delete files or upgrade the plan.`);
  }

  private async put(storageKey: string, upload: ReceivedFile, mediaType: string): Promise<void> {
    const body = createReadStream(upload.tempPath);
    try {
      await this.storage.put(storageKey, body, upload.size, mediaType);
    } catch (error) {
      // A put that failed early leaves the stream open on a file about to be removed.
      body.destroy();
      this.log.error({ err: error, driver: this.storage.driver }, 'could not store an uploaded object');
      await this.removeOrphan(storageKey);
      throw new AppError('storage_unavailable', 'The file could not be stored right now; nothing was kept. Retry the upload.');
    }
  }

  private async removeOrphan(storageKey: string): Promise<void> {
    await this.storage.delete(storageKey).catch((error: unknown) => this.log.error({ err: error, storageKey }, 'could not remove an object without a record'));
  }
}

function toDto(row: FileRow): FileDto {
  return { id: row.id, name: row.originalName, kind: row.kind, mediaType: row.mediaType, sizeBytes: row.sizeBytes, sha256: row.sha256, createdAt: row.createdAt.toISOString() };
}
