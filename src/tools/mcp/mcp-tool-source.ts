import { Inject, Injectable, Logger } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { SecretCipher } from '../../auth/two-factor/secret-cipher';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Tool, ToolError } from '../tool';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpConnector, McpEndpoint, McpWatch } from './mcp-connector';
import {
  McpServersRepository,
  StoredMcpServer,
} from './mcp-servers.repository';
import { callTool, McpToolInfo, readTools } from './mcp-tools';

/**
 * The tools of the MCP servers admins registered, as the registry offers them: `mcp.<server>.<tool>`, for the
 * plans each server names, with its approval policy. Reads and calls go through McpConnector.
 * docs/adr/0061-tools.md
 */
@Injectable()
export class McpToolSource {
  private readonly cipher: SecretCipher;
  private readonly logger = new Logger(McpToolSource.name);

  constructor(
    private readonly servers: McpServersRepository,
    private readonly connector: McpConnector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.cipher = new SecretCipher(
      config.secrets.dataEncryptionKey ?? config.secrets.session,
      'mcp-headers',
    );
  }

  /** Header values encrypted for storage. */
  sealHeaders(headers: Record<string, string>): Record<string, string> {
    return Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [
        name,
        this.cipher.encrypt(value),
      ]),
    );
  }

  /** The tools users of `caller`'s plan may use now. */
  async toolsFor(caller: SessionUser): Promise<Tool[]> {
    const servers = await this.servers.enabledFor(caller.planCode);
    return servers.flatMap((server) =>
      server.tools.map((tool) => this.toolOf(server, tool)),
    );
  }

  /** Reads the server's tools now and keeps them on its row (or why that failed). */
  async refresh(server: StoredMcpServer): Promise<StoredMcpServer | null> {
    try {
      const client = await this.connector.connect(this.endpointOf(server));
      try {
        return await this.readInto(server, client);
      } finally {
        await this.connector.release(client);
      }
    } catch (error) {
      return this.servers.recordTools(server.id, { error: describe(error) });
    }
  }

  /** Ends a connection (its session at the server too). */
  release(client: Client): Promise<void> {
    return this.connector.release(client);
  }

  /** A connection that stays open to hear the server's `tools/list_changed` (McpWatcher holds it). */
  watch(server: StoredMcpServer, watch: McpWatch): Promise<Client> {
    return this.connector.connect(this.endpointOf(server), watch);
  }

  /**
   * Reads the server's tools over an open connection and keeps them (or why that failed). Rejects only
   * when the database cannot record either.
   */
  async readInto(
    server: StoredMcpServer,
    client: Client,
  ): Promise<StoredMcpServer | null> {
    let outcome: { tools: McpToolInfo[] } | { error: string };
    try {
      outcome = { tools: await readTools(client, this.config.tools.timeoutMs) };
    } catch (error) {
      outcome = { error: describe(error) };
    }
    return this.servers.recordTools(server.id, outcome);
  }

  private toolOf(server: StoredMcpServer, tool: McpToolInfo): Tool {
    return {
      id: `mcp.${server.name}.${tool.name}`,
      title: tool.title ?? tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      source: server.name,
      approval: policyOf(server, tool),
      price: priceOf(server, tool.name),
      execute: async (_caller, args, context) => {
        try {
          const client = await this.connector.connect(this.endpointOf(server));
          try {
            return await callTool(
              client,
              { name: tool.name, args, executionId: context.executionId },
              this.config.tools.timeoutMs,
            );
          } finally {
            await this.connector.release(client);
          }
        } catch (error) {
          if (error instanceof ToolError) throw error;
          // The details (an upstream error body, a resolved address) are for operators, not for the
          // user, the model or the stored conversation.
          this.logger.warn(
            `MCP server ${server.name}, tool ${tool.name}: ${describe(error)}`,
          );
          throw new ToolError(
            `The MCP server ${server.name} could not be reached or did not answer the call.`,
          );
        }
      },
    };
  }

  private endpointOf(server: StoredMcpServer): McpEndpoint {
    return {
      url: server.url,
      headers: Object.fromEntries(
        Object.entries(server.headers).map(([name, sealed]) => [
          name,
          this.cipher.decrypt(sealed),
        ]),
      ),
    };
  }
}

/** A tool's policy: its own, else its server's, else `confirm` for a tool that may destroy and does not only read. */
export function policyOf(
  server: Pick<StoredMcpServer, 'approval' | 'toolPolicies'>,
  tool: Pick<McpToolInfo, 'name' | 'readOnly' | 'destructive'>,
): 'auto' | 'confirm' {
  return (
    (Object.hasOwn(server.toolPolicies, tool.name)
      ? server.toolPolicies[tool.name]
      : undefined) ??
    server.approval ??
    (tool.destructive && !tool.readOnly ? 'confirm' : 'auto')
  );
}

/** Credits per call of a server's tool: its price in the server's settings, else 0. */
export function priceOf(
  server: Pick<StoredMcpServer, 'toolPrices'>,
  toolName: string,
): number {
  return Object.hasOwn(server.toolPrices, toolName)
    ? server.toolPrices[toolName]
    : 0;
}

/** One line on what went wrong (with its causes: fetch hides the reason there), without stack or internals. */
export function describe(error: unknown): string {
  const parts: string[] = [];
  for (
    let current: unknown = error;
    current !== undefined && current !== null && parts.length < 4;
    current = (current as { cause?: unknown }).cause
  ) {
    const message =
      current instanceof Error
        ? current.message
        : typeof current === 'string'
          ? current
          : 'unknown error';
    const line = message.split('\n')[0];
    if (line && !parts.includes(line)) parts.push(line);
    if (!(current instanceof Error)) break;
  }
  return parts.join(': ').slice(0, 300);
}
