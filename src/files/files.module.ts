import { Module } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { AppLogger } from '../common/logging/app-logger';
import { OBJECT_STORAGE, ObjectStorage } from '../infra/storage/object-storage';
import { FilesController } from './files.controller';
import { FilesRepository } from './files.repository';
import { FilesService } from './files.service';
import { FileContextService } from './context/file-context.service';
import { TextExtractionService } from './extraction/text-extraction.service';
import { FileSearchService } from './search/file-search.service';
import { ObjectStorageEngine } from './upload/object-storage.engine';
import { MAX_UPLOAD_BYTES } from './upload/single-file.interceptor';

@Module({
  imports: [
    // The storage engine of FileInterceptor (SingleFileUpload sets the limits).
    MulterModule.registerAsync({
      inject: [OBJECT_STORAGE, AppLogger],
      useFactory: (storage: ObjectStorage, log: AppLogger) => ({
        storage: new ObjectStorageEngine(storage, log, MAX_UPLOAD_BYTES),
      }),
    }),
  ],
  controllers: [FilesController],
  providers: [
    FilesRepository,
    FilesService,
    TextExtractionService,
    FileContextService,
    FileSearchService,
  ],
  exports: [FileContextService, FileSearchService],
})
export class FilesModule {}
