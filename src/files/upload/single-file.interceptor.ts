import {
  BadRequestException,
  CallHandler,
  ExecutionContext,
  HttpException,
  Injectable,
  PayloadTooLargeException,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { Request, Response } from 'express';
import { MulterError } from 'multer';
import { Observable } from 'rxjs';
import { AppError } from '../../common/errors/app-error';
import { tooLarge } from '../file-kind';
import { UploadInterrupted } from './object-storage.engine';

/** 20 MiB, the contract's upload limit. */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
/** How much of a refused body is read and dropped, as a multiple of the file limit, before the connection is cut. */
const DRAIN_LIMIT_FACTOR = 4;

/**
 * multer's limits for POST /v1/files: one part, the file; no fields. The storage engine comes from
 * MulterModule (FilesModule), since it needs the object storage. File names are UTF-8 (what browsers
 * send), not busboy's default latin1.
 */
const UPLOAD_LIMITS = {
  fileSize: MAX_UPLOAD_BYTES,
  files: 1,
  fields: 0,
  parts: 1,
  headerPairs: 50,
};

/**
 * FileInterceptor('file') with this API's answers: 415 for a body that is not multipart/form-data, 400
 * (validation_failed, naming `file`) for a missing file, another field, a second part or a malformed
 * body, 413 past 20 MiB. Every refusal closes the connection: multer reads the rest of a refused body
 * so the client can read the answer, and past four times the limit the connection is cut instead.
 */
@Injectable()
export class SingleFileUpload extends FileInterceptor('file', {
  limits: UPLOAD_LIMITS,
  defParamCharset: 'utf8',
}) {
  override async intercept(
    context: ExecutionContext,
    next: CallHandler,
  ): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
      throw new AppError(
        'unsupported_media_type',
        'Upload the file as multipart/form-data in the field "file".',
      );
    }
    boundDrain(req, DRAIN_LIMIT_FACTOR * MAX_UPLOAD_BYTES);
    try {
      const handled = await super.intercept(context, next);
      if (!req.file) throw refusal('The field "file" with a file is missing.');
      return handled;
    } catch (error) {
      res.setHeader('Connection', 'close');
      throw uploadRefusal(error);
    }
  }
}

/** Cuts a request whose body goes on far past what any upload may be. */
function boundDrain(req: Request, maxBodyBytes: number): void {
  let bytes = 0;
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > maxBodyBytes) req.destroy();
  });
}

const MULTER_REFUSALS: Partial<Record<MulterError['code'], string>> = {
  LIMIT_FILE_COUNT: 'Only one file per upload.',
  LIMIT_PART_COUNT: 'Only one part per upload: the file field "file".',
  LIMIT_FIELD_COUNT:
    'Unexpected form field: only the file field "file" is accepted.',
};

/** multer's errors reach us as FileInterceptor made them (HttpExceptions with multer's messages). */
function uploadRefusal(error: unknown): unknown {
  if (error instanceof AppError) return error;
  if (error instanceof PayloadTooLargeException)
    return tooLarge(MAX_UPLOAD_BYTES);
  if (error instanceof UploadInterrupted)
    return refusal('The upload was interrupted.');
  if (error instanceof BadRequestException) {
    const message = error.message;
    const unexpected = new MulterError('LIMIT_UNEXPECTED_FILE').message;
    if (message.startsWith(unexpected)) {
      const field = message.slice(unexpected.length).replace(/^ - /, '');
      return refusal(
        `Unexpected file field "${field}": the file goes in the field "file".`,
      );
    }
    for (const [code, detail] of Object.entries(MULTER_REFUSALS)) {
      if (
        message.startsWith(new MulterError(code as MulterError['code']).message)
      )
        return refusal(detail);
    }
    return refusal('The multipart body is malformed.');
  }
  if (error instanceof HttpException) return error;
  // busboy's own errors, and the request closing mid-body ("Request aborted", "Request closed").
  if (error instanceof Error && /^Request (aborted|closed)/.test(error.message))
    return refusal('The upload was interrupted.');
  return refusal('The multipart body is malformed.');
}

function refusal(detail: string): AppError {
  return new AppError('validation_failed', detail, {
    errors: [{ field: 'file', code: 'invalid_upload', message: detail }],
  });
}
