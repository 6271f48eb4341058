import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { Request } from 'express';
import { AppError } from '../common/errors/app-error';

/** One uploaded file, written to a temporary file while it arrived; the caller removes `tempPath`. */
export interface ReceivedFile {
  tempPath: string;
  originalName: string;
  size: number;
  sha256: string;
}

/** Part headers and boundaries on top of the file itself; a body larger than file + this is cut off. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** How much of a refused body is read and dropped, as a multiple of the file limit, before the connection is cut. */
const DRAIN_LIMIT_FACTOR = 4;

/**
 * Reads a multipart/form-data body holding exactly one file in the field `file`, streaming it to a
 * temporary file and hashing it on the way; nothing is held in memory. Past `maxBytes` the upload is
 * refused with 413 at once (the temporary file removed); a missing file, a second file or any other
 * part is a 400. Every refusal closes the connection; the rest of the body is read and dropped only up to
 * a few times the size limit.
 */
export async function receiveSingleFile(req: Request, options: { maxBytes: number; tempDir: string }): Promise<ReceivedFile> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    throw new AppError('unsupported_media_type', 'Upload the file as multipart/form-data in the field "file".');
  }
  if (req.readableAborted || req.destroyed) throw refusal('The upload was interrupted.');
  await mkdir(options.tempDir, { recursive: true });
  let parser: busboy.Busboy;
  try {
    // busboy reports `limit` when the count reaches fileSize: one byte more than allowed means too large.
    // File names are UTF-8 (what browsers send), not busboy's default latin1.
    parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fields: 0, parts: 2, fileSize: options.maxBytes + 1, headerPairs: 50 } });
  } catch {
    throw refusal('The multipart body has no boundary.');
  }
  return new Promise<ReceivedFile>((resolve, reject) => {
    let tempPath: string | undefined;
    let current: Readable | undefined;
    let writing: Promise<ReceivedFile> | undefined;
    let settled = false;
    let bodyBytes = 0;
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      // Ends the write to the temporary file (busboy would only end it at the next boundary).
      current?.destroy(new Error('upload refused'));
      req.resume();
      const path = tempPath;
      void (writing ?? Promise.resolve())
        .catch(() => undefined)
        .finally(() => (path ? rm(path, { force: true }) : undefined))
        .then(() => reject(error));
    };
    req.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (bodyBytes <= options.maxBytes + MULTIPART_OVERHEAD_BYTES) return;
      if (!settled) return fail(tooLarge(options.maxBytes));
      // After a refusal the rest is read and dropped so the client can read the answer (closing a socket
      // with unread data makes the kernel reset it, losing the answer), but not without end.
      if (bodyBytes > DRAIN_LIMIT_FACTOR * options.maxBytes) req.destroy();
    });
    req.on('close', () => {
      if (!req.complete) fail(refusal('The upload was interrupted.'));
    });
    parser.on('file', (field, stream, info) => {
      stream.on('error', () => undefined);
      if (settled) {
        stream.resume();
        return;
      }
      if (field !== 'file') {
        stream.resume();
        return fail(refusal(`Unexpected file field "${field}": the file goes in the field "file".`));
      }
      const hash = createHash('sha256');
      let size = 0;
      current = stream;
      tempPath = join(options.tempDir, randomUUID());
      stream.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        size += chunk.length;
      });
      stream.on('limit', () => fail(tooLarge(options.maxBytes)));
      const path = tempPath;
      writing = pipeline(stream, createWriteStream(path)).then(() => ({ tempPath: path, originalName: info.filename ?? '', size, sha256: hash.digest('hex') }));
      writing.catch(() => fail(refusal('The upload could not be written; nothing was kept.')));
    });
    parser.on('field', (field) => fail(refusal(`Unexpected field "${field}": only the file field "file" is accepted.`)));
    parser.on('fieldsLimit', () => fail(refusal('Unexpected form field: only the file field "file" is accepted.')));
    parser.on('filesLimit', () => fail(refusal('Only one file per upload.')));
    // Emitted when a second part arrives (busboy counts up to the limit).
    parser.on('partsLimit', () => fail(refusal('Only one part per upload: the file field "file".')));
    parser.on('error', () => fail(refusal('The multipart body is malformed.')));
    parser.on('close', () => {
      if (settled) return;
      if (!writing) return fail(refusal('The field "file" with a file is missing.'));
      writing.then(
        (received) => {
          if (settled) return;
          settled = true;
          resolve(received);
        },
        () => undefined,
      );
    });
    req.pipe(parser);
  });
}

function refusal(detail: string): AppError {
  return new AppError('validation_failed', detail, { errors: [{ field: 'file', code: 'invalid_upload', message: detail }], headers: { Connection: 'close' } });
}

function tooLarge(maxBytes: number): AppError {
  return new AppError('payload_too_large', `The file is larger than ${maxBytes} bytes.`, { headers: { Connection: 'close' } });
}
