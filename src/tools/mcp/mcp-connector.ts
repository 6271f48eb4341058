import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { isIP, LookupFunction } from 'node:net';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { isPrivateAddress } from './mcp-address';

/** What a watching connection reports. */
export interface McpWatch {
  onToolsChanged(): void;
  onLost(): void;
}

/** Why an MCP server's URL or address is refused (the message names what to change). */
export class McpAddressRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpAddressRefused';
  }
}

/** What a connection needs: the server's URL and its headers (values in the clear). */
export interface McpEndpoint {
  url: string;
  headers: Record<string, string>;
}

/**
 * Connections to MCP servers through the official SDK client over Streamable HTTP. Every connection goes
 * through an HTTP agent whose DNS lookup refuses private, loopback and link-local addresses (unless the
 * host is in MCP_ALLOWED_HOSTS), so the check holds for the address actually connected to: a name that
 * resolves elsewhere at connection time (DNS rebinding), and a redirect, meet it again.
 * docs/adr/0061-tools.md
 */
@Injectable()
export class McpConnector implements OnApplicationShutdown {
  private readonly allowed: Set<string>;
  private readonly agent: Agent;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.allowed = new Set(config.tools.mcpAllowedHosts);
    this.agent = new Agent({
      connect: { lookup: this.guardedLookup, timeout: config.tools.timeoutMs },
      headersTimeout: config.tools.timeoutMs,
      // A watch holds a server's event stream open for long quiet spells; each request has its own
      // timeout in the SDK (TOOL_TIMEOUT_MS), so the body needs none here.
      bodyTimeout: 0,
    });
  }

  /** After every module's destroy hook: the watcher ends its sessions (DELETE) through this agent first. */
  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }

  /** Refuses a URL that is not http(s), not https where that is required, or a literal private address. */
  assertAllowedUrl(url: string): void {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new McpAddressRefused('url must be an absolute http(s) URL');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
      throw new McpAddressRefused('url must be an http(s) URL');
    if (this.config.tools.mcpRequireHttps && parsed.protocol !== 'https:')
      throw new McpAddressRefused('url must be https in production');
    if (parsed.username || parsed.password)
      throw new McpAddressRefused(
        'url must not hold credentials: put them in headers (stored encrypted)',
      );
    const host = hostOf(parsed);
    if (isIP(host) && isPrivateAddress(host) && !this.allowed.has(host))
      throw new McpAddressRefused(
        `${host} is a private, loopback or link-local address: list it in MCP_ALLOWED_HOSTS to allow it`,
      );
  }

  /**
   * A connected client; the caller closes it. `watch.onToolsChanged` is called when the server says its
   * tools changed (`notifications/tools/list_changed`), `watch.onLost` once the connection failed.
   */
  async connect(endpoint: McpEndpoint, watch?: McpWatch): Promise<Client> {
    this.assertAllowedUrl(endpoint.url);
    const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: endpoint.headers },
      fetch: this.fetch,
    });
    const client = new Client(
      { name: 'chat-backend', version: '1.0.0' },
      watch
        ? {
            listChanged: {
              tools: {
                autoRefresh: false,
                onChanged: () => watch.onToolsChanged(),
              },
            },
          }
        : undefined,
    );
    if (watch) {
      client.onerror = () => watch.onLost();
      client.onclose = () => watch.onLost();
    }
    await client.connect(transport, { timeout: this.config.tools.timeoutMs });
    return client;
  }

  /**
   * Ends a client's session at the server (DELETE, as the protocol asks of a client that no longer needs
   * it; a server that does not support it answers 405, which is fine) and closes the client. Never rejects.
   */
  async release(client: Client): Promise<void> {
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport)
      await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }

  /**
   * Fetch through the guarded agent. The answer to a request (a POST: a call's result, a tool list) may
   * weigh MAX_RESPONSE_BYTES at most, or it fails: the SDK reads a whole answer before the result is cut to
   * TOOL_RESULT_MAX_CHARS. The server's event stream (GET) carries only notifications and is not counted.
   * The SDK types its fetch with the DOM's types, undici has its own.
   */
  private readonly fetch = (async (url: string | URL, init?: RequestInit) => {
    const response = await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: this.agent,
    });
    if ((init?.method ?? 'GET').toUpperCase() !== 'POST' || !response.body)
      return response;
    return new Response(
      limited(response.body as ReadableStream<Uint8Array>, MAX_RESPONSE_BYTES),
      {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers as unknown as Headers,
      },
    );
  }) as unknown as typeof globalThis.fetch;

  private readonly guardedLookup: LookupFunction = (
    hostname,
    options,
    callback,
  ) => {
    dnsLookup(
      hostname,
      { ...options, all: true },
      (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 0);
        const refused = this.allowed.has(hostname.toLowerCase())
          ? undefined
          : addresses.find((entry) => isPrivateAddress(entry.address));
        if (refused) {
          const failure = Object.assign(
            new McpAddressRefused(
              `${hostname} resolves to ${refused.address}, a private, loopback or link-local address: list ${hostname} in MCP_ALLOWED_HOSTS to allow it`,
            ),
            { code: 'EMCPADDRESS' },
          );
          return callback(failure, '', 0);
        }
        if (options.all)
          return (
            callback as unknown as (error: null, all: LookupAddress[]) => void
          )(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
    );
  };
}

/** The most one answer of an MCP server may weigh. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The stream, failing once more than `max` bytes went through. */
function limited(
  body: ReadableStream<Uint8Array>,
  max: number,
): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > max)
          controller.error(
            new Error(`the MCP server's answer is over ${max} bytes`),
          );
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}
