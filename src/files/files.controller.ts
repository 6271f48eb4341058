import { pipeline } from 'node:stream/promises';
import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import contentDisposition from 'content-disposition';
import { Response } from 'express';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { PageQueryDto } from '../common/pagination';
import { FileDto, FilePageDto } from './dto/file.response';
import { MEDIA_TYPES } from './file-kind';
import { FilesService } from './files.service';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { UploadedFile as StoredFile } from './upload/object-storage.engine';
import { SingleFileUpload } from './upload/single-file.interceptor';

/** What a download is served as: the media type of the file's kind, without parameters. */
const DOWNLOAD_MEDIA_TYPES = [
  ...new Set(Object.values(MEDIA_TYPES).map((type) => type.split(';')[0])),
];

@ApiTags('files')
@Controller('files')
export class FilesController {
  constructor(private readonly files: FilesService) {}

  @RateLimit('upload-user')
  @Post()
  @ApiOperation({
    summary:
      'Upload one file (text, Markdown, PDF or DOCX; at most 20 MiB) in the multipart field "file"',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', format: 'binary' } },
    },
  })
  @ApiCreatedResponse({ type: FileDto })
  @ApiProblems(401, 503)
  @UseInterceptors(SingleFileUpload)
  upload(
    @CurrentUser() user: SessionUser,
    @UploadedFile() file: StoredFile,
  ): Promise<FileDto> {
    return this.files.store(user, file);
  }

  @Get()
  @ApiOperation({
    summary: "The caller's files, newest first (cursor pagination)",
  })
  @ApiOkResponse({ type: FilePageDto })
  @ApiProblems(401)
  list(
    @CurrentUser() user: SessionUser,
    @Query() query: PageQueryDto,
  ): Promise<FilePageDto> {
    return this.files.list(user, query);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'One of the caller’s files, with the state of its extracted text',
  })
  @ApiOkResponse({ type: FileDto })
  @ApiProblems(401, 404)
  get(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<FileDto> {
    return this.files.get(user, id);
  }

  @Get(':id/content')
  @ApiOperation({
    summary: 'The original bytes of one of the caller’s files, as a download',
  })
  @ApiProduces(...DOWNLOAD_MEDIA_TYPES)
  @ApiOkResponse({
    description:
      'The bytes, with the stored content type (that of the file’s kind) and `Content-Disposition: attachment`.',
    content: Object.fromEntries(
      DOWNLOAD_MEDIA_TYPES.map((type) => [
        type,
        { schema: { type: 'string', format: 'binary' } },
      ]),
    ),
  })
  @ApiProblems(401, 404, 503)
  async content(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Res() res: Response,
  ): Promise<void> {
    const file = await this.files.content(user, id);
    res.set({
      // RFC 6266: an ASCII `filename` for old clients, and the exact name as an RFC 5987 `filename*`.
      'Content-Disposition': contentDisposition(file.name, {
        fallback: asciiFallback(file.name),
      }),
      'Content-Type': file.mediaType,
      'Content-Length': String(file.sizeBytes),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private',
    });
    // A client that goes away ends the pipeline, which closes the storage stream.
    await pipeline(file.body, res).catch(() => undefined);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Delete one of the caller’s files: the stored object and its record',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(401, 404, 503)
  delete(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<void> {
    return this.files.delete(user, id);
  }
}

/** The name with every character beyond printable ASCII replaced by `_`. */
function asciiFallback(name: string): string {
  return name.replace(/[^\x20-\x7e]/g, '_');
}
