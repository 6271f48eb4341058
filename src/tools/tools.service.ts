import { Injectable } from '@nestjs/common';
import { ToolListDto } from './dto/tool.response';
import { ToolRegistry } from './tool-registry';

@Injectable()
export class ToolsService {
  constructor(private readonly registry: ToolRegistry) {}

  /** The tools the caller may use now. */
  list(): ToolListDto {
    return {
      data: this.registry.available().map((tool) => ({
        id: tool.id,
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        source: tool.source,
        approval: tool.approval,
      })),
    };
  }
}
