import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { LoopbackServer, readBody } from './loopback-server';

/** A tool the fake serves: what it lists, and what one call answers. */
export interface FakeMcpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
  /** The call's answer: text, or `{ error }` for a result marked isError, or a promise that never ends. */
  run?: (
    args: Record<string, unknown>,
  ) => string | { error: string } | Promise<string>;
}

/** One call as the fake received it. */
export interface FakeMcpCall {
  tool: string;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A real MCP server on loopback, built with the SDK's own Server and Streamable HTTP transport (stateful
 * sessions, so a client's event stream hears `notifications/tools/list_changed`). Its tools count their
 * executions; tests change the tool list and the server tells every open session.
 */
export class FakeMcpServer extends LoopbackServer {
  readonly calls: FakeMcpCall[] = [];
  /** Every request's headers (initialize included), to check what the service sends. */
  readonly requestHeaders: Record<string, string | string[] | undefined>[] = [];
  private tools: FakeMcpTool[];
  private readonly sessions = new Map<
    string,
    { server: Server; transport: StreamableHTTPServerTransport }
  >();
  /** When set, every request but a session's end (DELETE) is answered with this status and body instead. */
  broken?: { status: number; body: string };

  constructor(tools: FakeMcpTool[] = [echoTool()]) {
    super();
    this.tools = tools;
  }

  get url(): string {
    return `${this.baseUrl}/mcp`;
  }

  /** Executions of `tool` so far. */
  executions(tool: string): number {
    return this.calls.filter((call) => call.tool === tool).length;
  }

  /** Replaces the tool list and tells every open session (`notifications/tools/list_changed`). */
  async setTools(tools: FakeMcpTool[]): Promise<void> {
    this.tools = tools;
    await Promise.all(
      [...this.sessions.values()].map(({ server }) =>
        server.sendToolListChanged().catch(() => undefined),
      ),
    );
  }

  /** Sessions open now (the service's watches among them). */
  openSessions(): number {
    return this.sessions.size;
  }

  override async close(): Promise<void> {
    await Promise.all(
      [...this.sessions.values()].map(({ transport }) =>
        transport.close().catch(() => undefined),
      ),
    );
    this.sessions.clear();
    await super.close();
  }

  protected async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    this.requestHeaders.push(req.headers);
    if (this.broken && req.method !== 'DELETE') {
      res.writeHead(this.broken.status, { 'content-type': 'text/plain' });
      res.end(this.broken.body);
      return;
    }
    const body =
      req.method === 'POST' ? parseJson(await readBody(req)) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    const existing =
      typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (existing) {
      await existing.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || typeof sessionId === 'string') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          error: { code: -32001, message: 'Session not found' },
          id: null,
        }),
      );
      return;
    }
    const session = this.newSession();
    await session.server.connect(session.transport);
    await session.transport.handleRequest(req, res, body);
  }

  private newSession(): {
    server: Server;
    transport: StreamableHTTPServerTransport;
  } {
    const server = new Server(
      { name: 'fake-mcp', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: this.tools.map((tool) => ({
        name: tool.name,
        ...(tool.title ? { title: tool.title } : {}),
        description: tool.description ?? `The ${tool.name} tool`,
        inputSchema: tool.inputSchema ?? { type: 'object', properties: {} },
        ...(tool.annotations ? { annotations: tool.annotations } : {}),
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = this.tools.find(
        (candidate) => candidate.name === request.params.name,
      );
      const args = request.params.arguments ?? {};
      this.calls.push({
        tool: request.params.name,
        args,
        meta: request.params._meta,
        headers: extra.requestInfo?.headers ?? {},
      });
      if (!tool)
        return {
          content: [{ type: 'text', text: 'no such tool' }],
          isError: true,
        };
      const answer = await (tool.run ?? (() => JSON.stringify(args)))(args);
      if (typeof answer === 'object')
        return {
          content: [{ type: 'text', text: answer.error }],
          isError: true,
        };
      return { content: [{ type: 'text', text: answer }] };
    });
    const transport: StreamableHTTPServerTransport =
      new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.sessions.set(id, { server, transport });
        },
        onsessionclosed: (id) => {
          this.sessions.delete(id);
        },
      });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    return { server, transport };
  }
}

/** A read-only tool that answers its arguments back. */
export function echoTool(name = 'echo'): FakeMcpTool {
  return {
    name,
    description: 'Answers its text back',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    },
    annotations: { readOnlyHint: true },
    run: (args) => `echo: ${String(args.text)}`,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
