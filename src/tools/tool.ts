import { SessionUser } from '../auth/session-user';

/** A JSON Schema object, as tools describe their arguments. */
export type JsonSchema = Record<string, unknown>;

/**
 * A tool the model may call (docs/adr/0061-tools.md). Its id is `<source>.<name>`: `files.search` for a
 * built-in, `mcp.<server>.<tool>` for a tool of an MCP server.
 */
export interface Tool {
  id: string;
  title: string;
  description: string;
  /** The arguments the tool takes (a JSON Schema object). */
  inputSchema: JsonSchema;
  /** `builtin`, or the name of the MCP server. */
  source: string;
  /** `confirm`: the run waits for its owner to approve each call. */
  approval: 'auto' | 'confirm';
  /** Credits charged per call that runs (the catalog's for built-ins, the server's settings for MCP). */
  price: number;
  /** Runs one call for `caller`; what it answers goes back to the model as the call's result. */
  execute(
    caller: SessionUser,
    args: Record<string, unknown>,
    context: ToolCallContext,
  ): Promise<string>;
}

/** What one call knows besides its arguments. */
export interface ToolCallContext {
  /** The execution's id (its ToolExecution row): an MCP call carries it in `_meta` for deduplication. */
  executionId: string;
}

/** A failure the model is told about (the call's result is this message); the run goes on. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}
