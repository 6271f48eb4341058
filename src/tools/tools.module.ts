import { Module } from '@nestjs/common';
import { FilesModule } from '../files/files.module';
import { FilesSearchTool } from './builtin/files-search.tool';
import { ToolRegistry } from './tool-registry';
import { ToolsController } from './tools.controller';
import { ToolsService } from './tools.service';

/** The tools a model may call in a run: the registry, the built-ins, GET /v1/tools (docs/adr/0061-tools.md). */
@Module({
  imports: [FilesModule],
  controllers: [ToolsController],
  providers: [FilesSearchTool, ToolRegistry, ToolsService],
  exports: [ToolRegistry],
})
export class ToolsModule {}
