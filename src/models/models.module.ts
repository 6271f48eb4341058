import { Module } from '@nestjs/common';
import { ModelProviders } from './model-providers';

/** The model provider adapters; the chat pipeline (issue 4) resolves a catalog model's provider here. */
@Module({ providers: [ModelProviders], exports: [ModelProviders] })
export class ModelsModule {}
