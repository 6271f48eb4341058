import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { CatalogCache } from './catalog-cache';
import { loadCatalogFile } from './catalog-file';
import { CatalogRepository } from './catalog.repository';
import { CatalogSyncService } from './catalog-sync.service';
import { CATALOG } from './catalog.token';

@Module({
  providers: [
    {
      provide: CATALOG,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => loadCatalogFile(config.catalogFile),
    },
    CatalogCache,
    CatalogRepository,
    CatalogSyncService,
  ],
  exports: [CATALOG, CatalogCache, CatalogSyncService],
})
export class CatalogModule {}
