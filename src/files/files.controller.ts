import { Controller, Delete, Get, HttpCode, Param, Post, Query, UploadedFile, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { PageQueryDto } from '../common/pagination';
import { FileDto, FilePageDto } from './dto/file.response';
import { FilesService } from './files.service';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { UploadedFile as StoredFile } from './upload/object-storage.engine';
import { SingleFileUpload } from './upload/single-file.interceptor';

@ApiTags('files')
@Controller('files')
export class FilesController {
  constructor(private readonly files: FilesService) {}

  @RateLimit('upload-user')
  @Post()
  @ApiOperation({ summary: 'Upload one file (text, Markdown, PDF or DOCX; at most 20 MiB) in the multipart field "file"' })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } })
  @ApiCreatedResponse({ type: FileDto })
  @ApiProblems(401, 503)
  @UseInterceptors(SingleFileUpload)
  upload(@CurrentUser() user: SessionUser, @UploadedFile() file: StoredFile): Promise<FileDto> {
    return this.files.store(user, file);
  }

  @Get()
  @ApiOperation({ summary: "The caller's files, newest first (cursor pagination)" })
  @ApiOkResponse({ type: FilePageDto })
  @ApiProblems(401)
  list(@CurrentUser() user: SessionUser, @Query() query: PageQueryDto): Promise<FilePageDto> {
    return this.files.list(user, query);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete one of the caller’s files: the stored object and its record' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(401, 404, 503)
  delete(@CurrentUser() user: SessionUser, @Param('id') id: string): Promise<void> {
    return this.files.delete(user, id);
  }
}
