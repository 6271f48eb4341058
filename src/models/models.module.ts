import { Module } from '@nestjs/common';
import { ModelProviders } from './model-providers';

/** The provider adapters that serve the catalog's models (the models themselves: CatalogCache). */
@Module({ providers: [ModelProviders], exports: [ModelProviders] })
export class ModelsModule {}
