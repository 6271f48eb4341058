import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { ToolListDto } from './dto/tool.response';
import { Tool } from './tool';
import { ToolRegistry } from './tool-registry';

@Injectable()
export class ToolsService {
  constructor(private readonly registry: ToolRegistry) {}

  /**
   * The tools of these ids, each one the caller may use now; a 400 naming each they may not (`field.N`),
   * as for `tools` in a chat and `allowed_tools` of a Skill.
   */
  async usableOrRefuse(
    caller: SessionUser,
    ids: string[],
    field: string,
  ): Promise<Tool[]> {
    const found = await this.registry.findEach(caller, ids);
    const refused = ids.filter((_, index) => !found[index]);
    if (refused.length > 0)
      throw new AppError(
        'validation_failed',
        `${field} names tools you may not use: ${refused.join(', ')} (GET /v1/tools lists yours).`,
        {
          errors: refused.map((id) => ({
            field: `${field}.${ids.indexOf(id)}`,
            code: 'unknown_tool',
            message: `${id} is not a tool you may use`,
          })),
        },
      );
    return found.filter((tool) => tool !== undefined);
  }

  /** Those of these ids the caller may still use, in order (a Skill's binding after a plan change). */
  async stillUsable(caller: SessionUser, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const found = await this.registry.findEach(caller, ids);
    return ids.filter((_, index) => found[index]);
  }

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
        price: tool.price,
      })),
    };
  }
}
