import { Module } from '@nestjs/common';
import { CatalogCache } from './catalog-cache';
import { CatalogRepository } from './catalog.repository';
import { CatalogSyncService } from './catalog-sync.service';

@Module({
  providers: [CatalogCache, CatalogRepository, CatalogSyncService],
  exports: [CatalogCache, CatalogSyncService],
})
export class CatalogModule {}
