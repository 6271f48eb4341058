import { Global, Inject, Module, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { LocalDiskStorage } from './local-disk.storage';
import { OBJECT_STORAGE, ObjectStorage } from './object-storage';
import { S3Storage } from './s3.storage';

/** The configured object storage: S3 when S3_BUCKET is set, else the local STORAGE_DIR. */
@Global()
@Module({
  providers: [
    {
      provide: OBJECT_STORAGE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): ObjectStorage =>
        config.storage.s3
          ? new S3Storage(config.storage.s3)
          : new LocalDiskStorage(config.storage.dir),
    },
  ],
  exports: [OBJECT_STORAGE],
})
export class StorageModule implements OnModuleDestroy {
  constructor(
    @Inject(OBJECT_STORAGE) private readonly storage: ObjectStorage,
  ) {}

  onModuleDestroy(): void {
    if (this.storage instanceof S3Storage) this.storage.close();
  }
}
