import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
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

/**
 * Reads a multipart/form-data body holding exactly one file in the field `file`, streaming it to a
 * temporary file and hashing it on the way; nothing is held in memory. Past `maxBytes` the upload is
 * refused with 413 at once (the temporary file removed); a missing file, a second file or any other
 * field is a 400.
 */
export async function receiveSingleFile(req: Request, options: { maxBytes: number; tempDir: string }): Promise<ReceivedFile> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    throw new AppError('unsupported_media_type', 'Upload the file as multipart/form-data in the field "file".');
  }
  await mkdir(options.tempDir, { recursive: true });
  let parser: busboy.Busboy;
  try {
    // busboy reports `limit` when the count reaches fileSize: one byte more than allowed means too large.
    // File names are UTF-8 (what browsers send), not busboy's default latin1.
    parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fields: 0, fileSize: options.maxBytes + 1, headerPairs: 50 } });
  } catch {
    throw badUpload('The multipart body has no boundary.');
  }
  return new Promise<ReceivedFile>((resolve, reject) => {
    let tempPath: string | undefined;
    let writing: Promise<ReceivedFile> | undefined;
    let settled = false;
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      // The rest of the body is read and dropped by Node; the client then gets the answer.
      req.resume();
      const path = tempPath;
      void (writing ?? Promise.resolve()).catch(() => undefined).finally(() => (path ? rm(path, { force: true }) : undefined)).then(() => reject(error));
    };
    parser.on('file', (field, stream, info) => {
      if (settled) {
        stream.resume();
        return;
      }
      if (field !== 'file') {
        stream.resume();
        return fail(badUpload(`Unexpected file field "${field}": the file goes in the field "file".`));
      }
      const hash = createHash('sha256');
      let size = 0;
      tempPath = join(options.tempDir, randomUUID());
      stream.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        size += chunk.length;
      });
      stream.on('limit', () => fail(new AppError('payload_too_large', `The file is larger than ${options.maxBytes} bytes.`, { headers: { Connection: 'close' } })));
      const path = tempPath;
      writing = pipeline(stream, createWriteStream(path)).then(() => ({ tempPath: path, originalName: info.filename ?? '', size, sha256: hash.digest('hex') }));
      writing.catch(() => undefined);
    });
    parser.on('field', (field) => fail(badUpload(`Unexpected field "${field}": only the file field "file" is accepted.`)));
    parser.on('fieldsLimit', () => fail(badUpload('Unexpected form field: only the file field "file" is accepted.')));
    parser.on('filesLimit', () => fail(badUpload('Only one file per upload.')));
    parser.on('error', () => fail(badUpload('The multipart body is malformed.')));
    parser.on('close', () => {
      if (settled) return;
      if (!writing) return fail(badUpload('The field "file" with a file is missing.'));
      writing.then(
        (received) => {
          if (settled) return;
          settled = true;
          resolve(received);
        },
        () => fail(badUpload('The upload was interrupted.')),
      );
    });
    req.on('aborted', () => fail(badUpload('The upload was interrupted.')));
    req.pipe(parser);
  });
}

function badUpload(detail: string): AppError {
  return new AppError('validation_failed', detail, { errors: [{ field: 'file', code: 'invalid_upload', message: detail }] });
}
