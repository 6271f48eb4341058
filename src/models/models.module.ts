import { Module } from '@nestjs/common';
import { ModelProviders } from './model-providers';
import { ModelsRepository } from './models.repository';

/** The catalog's models and the provider adapters that serve them. */
@Module({ providers: [ModelProviders, ModelsRepository], exports: [ModelProviders, ModelsRepository] })
export class ModelsModule {}
