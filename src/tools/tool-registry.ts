import { Injectable } from '@nestjs/common';
import { FilesSearchTool } from './builtin/files-search.tool';
import { Tool } from './tool';

/**
 * Every tool there is, by id: the built-ins (always available, also on the two-command start); the tools of
 * MCP servers join them as servers are registered (docs/adr/0061-tools.md).
 */
@Injectable()
export class ToolRegistry {
  private readonly builtins: Tool[];

  constructor(filesSearch: FilesSearchTool) {
    this.builtins = [filesSearch];
  }

  /**
   * The tools a caller may use now, in a stable order. Built-ins are for every plan; MCP servers' tools will
   * be filtered by the caller's plan here.
   */
  available(): Tool[] {
    return [...this.builtins];
  }

  /** The tool with this id if it may be used, else undefined (unknown and forbidden look alike). */
  find(id: string): Tool | undefined {
    return this.available().find((tool) => tool.id === id);
  }
}
