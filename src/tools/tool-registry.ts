import { Inject, Injectable } from '@nestjs/common';
import { FilesSearchTool } from './builtin/files-search.tool';
import { McpToolSource } from './mcp/mcp-tool-source';
import { Tool } from './tool';
import { SessionUser } from '../auth/session-user';

/** The built-in tools' prices per call, from the catalog file's `tools` section. */
export const BUILTIN_TOOL_PRICES = Symbol('BUILTIN_TOOL_PRICES');
export type BuiltinToolPrices = Record<string, { perCall: number }>;

/**
 * Every tool there is, by id: the built-ins (always available, also on the two-command start); the tools of
 * MCP servers join them as servers are registered (docs/adr/0061-tools.md).
 */
@Injectable()
export class ToolRegistry {
  private readonly builtins: Tool[];

  constructor(
    filesSearch: FilesSearchTool,
    private readonly mcp: McpToolSource,
    @Inject(BUILTIN_TOOL_PRICES) prices: BuiltinToolPrices,
  ) {
    this.builtins = [filesSearch].map((tool) => priced(tool, prices));
  }

  /**
   * The tools `caller` may use now, in a stable order: the built-ins (every plan), then the tools of the
   * enabled MCP servers open to the caller's plan.
   */
  async available(caller: SessionUser): Promise<Tool[]> {
    return [...this.builtins, ...(await this.mcp.toolsFor(caller))];
  }

  /** Each of these ids' tool if `caller` may use it, else undefined, in the ids' order (one reading). */
  async findEach(
    caller: SessionUser,
    ids: string[],
  ): Promise<(Tool | undefined)[]> {
    const byId = new Map(
      (await this.available(caller)).map((tool) => [tool.id, tool]),
    );
    return ids.map((id) => byId.get(id));
  }

  /** The tool with this id if `caller` may use it, else undefined (unknown and forbidden look alike). */
  async find(caller: SessionUser, id: string): Promise<Tool | undefined> {
    return (await this.available(caller)).find((tool) => tool.id === id);
  }
}

/** The tool with its catalog price (its methods kept: the object is its prototype). */
function priced(tool: Tool, prices: BuiltinToolPrices): Tool {
  const price = prices[tool.id]?.perCall;
  if (price === undefined || price === tool.price) return tool;
  return Object.assign(Object.create(tool) as Tool, { price });
}
