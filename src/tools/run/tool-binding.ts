import { ToolSpec } from '../../models/providers/model-provider';
import { wireNameOf } from '../../models/providers/tool-names';

import { Tool } from '../tool';

/**
 * The tools one run offers the model, each under a name its provider accepts (`files.search` becomes
 * `files_search`; two ids that would collide get a numbered suffix), and the way back from a name the
 * model wrote to the tool.
 */
export class ToolBinding {
  private readonly byWire = new Map<string, Tool>();
  private readonly wireOf = new Map<string, string>();

  constructor(readonly tools: Tool[]) {
    for (const tool of tools) {
      const base = wireNameOf(tool.id);
      let name = base;
      for (let n = 2; this.byWire.has(name); n++)
        name = `${base.slice(0, 60)}_${n}`;
      this.byWire.set(name, tool);
      this.wireOf.set(tool.id, name);
    }
  }

  get ids(): string[] {
    return this.tools.map((tool) => tool.id);
  }

  /** What the provider receives. */
  specs(): ToolSpec[] {
    return this.tools.map((tool) => ({
      name: this.wireOf.get(tool.id)!,
      description: tool.description,
      parameters: tool.inputSchema,
    }));
  }

  /** The tool the model named, if it is one of the run's. */
  toolNamed(wireName: string): Tool | undefined {
    return this.byWire.get(wireName);
  }

  /** The wire name of a tool id: the bound one, else derived (a tool of an earlier turn no longer bound). */
  wireNameFor(toolId: string): string {
    return this.wireOf.get(toolId) ?? wireNameOf(toolId);
  }
}
