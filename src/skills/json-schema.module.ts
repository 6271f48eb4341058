import { Module } from '@nestjs/common';
import { JsonSchemaService } from './json-schema.service';

/** The JSON Schema worker, shared by Skills (inputs, outputs) and tools (the model's arguments). */
@Module({ providers: [JsonSchemaService], exports: [JsonSchemaService] })
export class JsonSchemaModule {}
