import { Module } from '@nestjs/common';
import { FilesModule } from '../files/files.module';
import { FilesSearchTool } from './builtin/files-search.tool';
import { McpConnector } from './mcp/mcp-connector';
import { McpServersRepository } from './mcp/mcp-servers.repository';
import { McpToolSource } from './mcp/mcp-tool-source';
import { McpWatcher } from './mcp/mcp-watcher';
import { ApprovalSignals } from './approvals/approval-signals';
import { ApprovalsController } from './approvals/approvals.controller';
import { ToolApprovalsRepository } from './approvals/tool-approvals.repository';
import { ToolApprovals } from './approvals/tool-approvals.service';
import { JsonSchemaModule } from '../skills/json-schema.module';
import { ToolExecutionsRepository } from './run/tool-executions.repository';
import { ToolRunner } from './run/tool-runner';
import {
  BUILTIN_TOOL_PRICES,
  BuiltinToolPrices,
  ToolRegistry,
} from './tool-registry';
import { CatalogModule } from '../catalog/catalog.module';
import { CATALOG } from '../catalog/catalog.token';
import { Catalog } from '../catalog/catalog.schema';
import { ToolsController } from './tools.controller';
import { ToolsService } from './tools.service';

/** The tools a model may call in a run: the registry, the built-ins, GET /v1/tools (docs/adr/0061-tools.md). */
@Module({
  imports: [CatalogModule, FilesModule, JsonSchemaModule],
  controllers: [ToolsController, ApprovalsController],
  providers: [
    {
      provide: BUILTIN_TOOL_PRICES,
      inject: [CATALOG],
      useFactory: (catalog: Catalog): BuiltinToolPrices => catalog.tools,
    },
    ApprovalSignals,
    FilesSearchTool,
    McpConnector,
    McpServersRepository,
    McpToolSource,
    McpWatcher,
    ToolApprovals,
    ToolApprovalsRepository,
    ToolExecutionsRepository,
    ToolRegistry,
    ToolRunner,
    ToolsService,
  ],
  exports: [
    ToolExecutionsRepository,
    ToolRegistry,
    ToolRunner,
    ToolsService,
    McpServersRepository,
    McpToolSource,
    McpConnector,
    McpWatcher,
  ],
})
export class ToolsModule {}
