import {
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Clock } from '../../common/clock';
import {
  McpServersRepository,
  StoredMcpServer,
} from './mcp-servers.repository';
import { describe, McpToolSource } from './mcp-tool-source';

/** How often an instance compares its watches with the servers' rows (another instance may have changed them). */
const SYNC_INTERVAL_MS = 30_000;
/** A server's tools are read again when the last reading is older than this, whatever the watch heard. */
const REREAD_AFTER_MS = 5 * 60_000;

interface Watched {
  /** What the connection was opened with (url, headers): a change opens a new one. */
  version: string;
  client?: Client;
  lost: boolean;
}

/**
 * Keeps the stored tool lists of the enabled MCP servers current on every instance: one open connection per
 * server hears `notifications/tools/list_changed` and reads the tools again at once; a reading older than
 * five minutes is redone anyway (a lost notification, a server that cannot notify), by whichever instance
 * gets there first. Watches follow the rows: opened for a new or changed server, closed for a removed or
 * disabled one, reopened after a lost connection. docs/adr/0061-tools.md
 */
@Injectable()
export class McpWatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(McpWatcher.name);
  private readonly watched = new Map<string, Watched>();
  /** Servers whose watch failed last time: warned about once, not every tick. */
  private readonly failing = new Set<string>();
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly servers: McpServersRepository,
    private readonly source: McpToolSource,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    void this.sync();
    this.timer = setInterval(() => void this.sync(), SYNC_INTERVAL_MS);
    this.timer.unref();
  }

  /** Never rejects: a failed pass is logged, and the next tick tries again. */

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.syncing;
    await Promise.all([...this.watched.keys()].map((id) => this.unwatch(id)));
  }

  /** Brings the watches in line with the rows now (after an admin's change on this instance, and on a timer). */
  sync(): Promise<void> {
    this.syncing ??= this.syncOnce()
      .catch((error: unknown) =>
        this.logger.warn(`MCP watch pass failed: ${describe(error)}`),
      )
      .finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    if (this.stopped) return;
    let servers: StoredMcpServer[];
    try {
      servers = (await this.servers.list()).filter((server) => server.enabled);
    } catch {
      return; // The database is away: the next tick tries again.
    }
    const current = new Set(servers.map((server) => server.id));
    for (const id of this.watched.keys())
      if (!current.has(id)) await this.unwatch(id);
    await Promise.all(servers.map((server) => this.follow(server)));
  }

  private async follow(server: StoredMcpServer): Promise<void> {
    const watched = this.watched.get(server.id);
    // Not updatedAt: every reading of the tools changes the row, and must not reopen the watch.
    const version = JSON.stringify([server.url, server.headers]);
    if (!watched || watched.lost || watched.version !== version) {
      await this.unwatch(server.id);
      await this.open(server, version);
      return;
    }
    const readAt = server.toolsReadAt?.getTime() ?? 0;
    if (this.clock.now().getTime() - readAt > REREAD_AFTER_MS && watched.client)
      await this.source.readInto(server, watched.client);
  }

  private async open(server: StoredMcpServer, version: string): Promise<void> {
    const entry: Watched = { version, lost: false };
    this.watched.set(server.id, entry);
    try {
      entry.client = await this.source.watch(server, {
        onToolsChanged: () => {
          if (entry.client && !entry.lost)
            this.source
              .readInto(server, entry.client)
              .catch((error: unknown) =>
                this.logger.warn(
                  `MCP server ${server.name}: its tools could not be read again: ${describe(error)}`,
                ),
              );
        },
        onLost: () => (entry.lost = true),
      });
      this.failing.delete(server.id);
      if (this.stopped) return await this.unwatch(server.id);
      await this.source.readInto(server, entry.client);
    } catch (error) {
      entry.lost = true;
      if (!this.failing.has(server.id))
        this.logger.warn(
          `MCP server ${server.name} cannot be watched: ${describe(error)}`,
        );
      this.failing.add(server.id);
      // Records why on the row, for GET /v1/admin/mcp-servers.
      await this.source.refresh(server).catch(() => undefined);
    }
  }

  private async unwatch(id: string): Promise<void> {
    const entry = this.watched.get(id);
    this.watched.delete(id);
    if (entry) entry.lost = true;
    if (entry?.client) await this.source.release(entry.client);
  }
}
