import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { ToolListDto } from './dto/tool.response';
import { ToolRegistry } from './tool-registry';

@Injectable()
export class ToolsService {
  constructor(private readonly registry: ToolRegistry) {}

  /** The tools the caller may use now. */
  async list(caller: SessionUser): Promise<ToolListDto> {
    return {
      data: (await this.registry.available(caller)).map((tool) => ({
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
