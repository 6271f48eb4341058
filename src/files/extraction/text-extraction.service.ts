import { Readable } from 'node:stream';
import {
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import {
  OBJECT_STORAGE,
  ObjectMissing,
  ObjectStorage,
} from '../../infra/storage/object-storage';
import { FilesRepository, PendingText } from '../files.repository';
import { chunkText } from './chunk-text';
import { extractText } from './text-extractor';

/** How often an instance looks for pending files it was not told about (other instances', crashed claims). */
const POLL_MS = 30_000;
/** A file whose extraction was claimed this often without an outcome (its process died each time) is failed. */
const MAX_ATTEMPTS = 3;

/**
 * Extracts the text of uploaded files in the background, one file at a time per instance: takes the
 * oldest pending file (a claim in the database, so instances share the work and a crashed instance's file
 * is taken again once its claim runs out, at most three times), reads it from the object storage, extracts
 * in a child process and stores the text in chunks, or the failure's code. Stopping (module destroy, before
 * the database pool closes) ends the extraction under way and gives its file back.
 * docs/adr/0045-text-extraction-in-a-child-process.md
 */
@Injectable()
export class TextExtractionService
  implements OnApplicationBootstrap, OnModuleDestroy
{
  private readonly stopping = new AbortController();
  private running: Promise<void> | null = null;
  private again = false;
  private poll?: NodeJS.Timeout;

  constructor(
    private readonly files: FilesRepository,
    @Inject(OBJECT_STORAGE) private readonly storage: ObjectStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  /** An instance with FILE_EXTRACTION_ENABLED=false leaves extraction to the others (they share the storage). */
  onApplicationBootstrap(): void {
    if (!this.config.storage.extraction.enabled) {
      this.stopping.abort();
      return;
    }
    this.kick();
    this.poll = setInterval(() => this.kick(), POLL_MS).unref();
  }

  /** FilesModule is destroyed before the global database and storage modules: both are still open here. */
  async onModuleDestroy(): Promise<void> {
    clearInterval(this.poll);
    this.stopping.abort();
    await this.running;
  }

  /** Starts working through pending files, unless already at it (then it looks again when done). */
  kick(): void {
    if (this.stopping.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error: unknown) =>
        this.log.warn({ err: error }, 'text extraction paused'),
      )
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves once nothing pending is left (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    const claimMs = this.config.storage.extraction.timeoutMs + 60_000;
    while (!this.stopping.signal.aborted) {
      const file = await this.files.claimPendingText(claimMs);
      if (!file) return;
      if (this.stopping.signal.aborted) return this.files.releaseText(file.id);
      await this.extract(file);
    }
  }

  private async extract(file: PendingText): Promise<void> {
    if (file.attempts > MAX_ATTEMPTS)
      return this.fail(file, 'extraction_failed');
    let bytes: Buffer;
    try {
      bytes = await readAll(
        await this.storage.read(file.storageKey),
        file.sizeBytes,
      );
    } catch (error) {
      if (error instanceof ObjectMissing)
        return this.fail(file, 'file_missing');
      // The storage is down: the claim runs out and the file is tried again.
      this.log.warn(
        { err: error, fileId: file.id },
        'could not read a file to extract its text',
      );
      return;
    }
    const result = await extractText(
      file.kind,
      bytes,
      this.config.storage.extraction,
      this.stopping.signal,
    );
    if (!result.ok && result.code === 'extraction_stopped')
      return this.files.releaseText(file.id);
    if (!result.ok) {
      return this.fail(file, result.code);
    }
    const chunks = chunkText(result.text);
    await this.files.saveText(file.id, {
      chars: chunks.reduce((sum, chunk) => sum + chunk.length, 0),
      pages: result.pages ?? null,
      chunks,
    });
  }

  private async fail(file: PendingText, code: string): Promise<void> {
    this.log.info(
      { fileId: file.id, code, attempts: file.attempts },
      'file text extraction failed',
    );
    await this.files.failText(file.id, code);
  }
}

/** The object's bytes, refusing more than the record says (the stored size is the upload's, at most 20 MiB). */
async function readAll(stream: Readable, size: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    length += (chunk as Buffer).length;
    if (length > size) {
      stream.destroy();
      throw new Error('the stored object is larger than its record');
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, length);
}
