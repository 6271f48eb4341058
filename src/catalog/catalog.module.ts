import { Module } from '@nestjs/common';
import { CatalogRepository } from './catalog.repository';
import { CatalogSyncService } from './catalog-sync.service';

@Module({ providers: [CatalogRepository, CatalogSyncService], exports: [CatalogSyncService] })
export class CatalogModule {}
