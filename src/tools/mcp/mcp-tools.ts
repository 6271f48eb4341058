import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolError } from '../tool';

/** A tool as an MCP server listed it (`tools/list`), as kept on its server's row. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The server's annotations: a tool that may destroy and is not read-only defaults to `confirm`. */
  readOnly: boolean;
  destructive: boolean;
}

/** The most tools kept of one server, and what one may weigh: a server answering garbage yields less. */
const MAX_TOOLS = 200;
const MAX_PAGES = 10;
const MAX_DESCRIPTION_CHARS = 2_000;
const MAX_SCHEMA_CHARS = 20_000;
/** MCP tool names: 1-128 of letters, digits, `_`, `-` and `.`. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** The server's tools, page after page; tools with an unusable name or schema are left out. */
export async function readTools(
  client: Client,
  timeoutMs: number,
): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page++) {
    const listed = await client.listTools(cursor ? { cursor } : undefined, {
      timeout: timeoutMs,
    });
    for (const tool of listed.tools) {
      const info = toInfo(tool);
      if (info && tools.length < MAX_TOOLS) tools.push(info);
    }
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

function toInfo(tool: {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
}): McpToolInfo | null {
  if (!TOOL_NAME.test(tool.name)) return null;
  if (JSON.stringify(tool.inputSchema).length > MAX_SCHEMA_CHARS) return null;
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title.slice(0, 200) } : {}),
    description: (tool.description ?? '').slice(0, MAX_DESCRIPTION_CHARS),
    inputSchema: tool.inputSchema,
    readOnly: tool.annotations?.readOnlyHint === true,
    // Only a tool the server annotates as destructive counts as one (docs/adr/0061-tools.md).
    destructive: tool.annotations?.destructiveHint === true,
  };
}

/**
 * One call: the execution id goes in `_meta` so the server can recognise a call it has seen. The result's
 * text parts, joined; other parts (images, resources) are named, not sent. A result marked as an error is
 * a ToolError: the model reads it.
 */
export async function callTool(
  client: Client,
  call: { name: string; args: Record<string, unknown>; executionId: string },
  timeoutMs: number,
): Promise<string> {
  const result = await client.callTool(
    {
      name: call.name,
      arguments: call.args,
      _meta: { executionId: call.executionId },
    },
    undefined,
    { timeout: timeoutMs },
  );
  const parts = Array.isArray(result.content) ? result.content : [];
  const text = parts
    .map((part: unknown) => {
      const item = part as { type?: unknown; text?: unknown };
      return item.type === 'text' && typeof item.text === 'string'
        ? item.text
        : `[${typeof item.type === 'string' ? item.type : 'content'} not shown]`;
    })
    .join('\n');
  if (result.isError === true) throw new ToolError(text || 'the tool failed');
  return text;
}
