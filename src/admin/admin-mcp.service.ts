import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { Prisma } from '../infra/prisma/generated/client';
import { Db } from '../infra/prisma/prisma.service';
import { McpAddressRefused, McpConnector } from '../tools/mcp/mcp-connector';
import {
  McpServerFields,
  McpServersRepository,
  StoredMcpServer,
} from '../tools/mcp/mcp-servers.repository';
import { McpToolSource, policyOf, priceOf } from '../tools/mcp/mcp-tool-source';
import { McpWatcher } from '../tools/mcp/mcp-watcher';
import { AdminActionsGate } from './admin-actions.gate';
import { AdminCatalogRepository } from './admin-catalog.repository';
import { AuditRepository } from '../audit/audit.repository';
import {
  AdminMcpServerDto,
  AdminMcpServerListDto,
  CreateMcpServerDto,
  UpdateMcpServerDto,
} from './dto/admin-mcp.dto';

/**
 * The MCP servers admins register (docs/adr/0061-tools.md): each change is audited in its own transaction;
 * header values are sealed before they are stored and never shown; the server's tools are read at once.
 */
@Injectable()
export class AdminMcpService {
  constructor(
    private readonly servers: McpServersRepository,
    private readonly source: McpToolSource,
    private readonly connector: McpConnector,
    private readonly watcher: McpWatcher,
    private readonly catalog: AdminCatalogRepository,
    private readonly audit: AuditRepository,
    private readonly gate: AdminActionsGate,
  ) {}

  async list(): Promise<AdminMcpServerListDto> {
    return { data: (await this.servers.list()).map(toDto) };
  }

  async get(id: string): Promise<AdminMcpServerDto> {
    return toDto(await this.found(id));
  }

  async create(
    admin: SessionUser,
    input: CreateMcpServerDto,
  ): Promise<AdminMcpServerDto> {
    this.assertUrl(input.url);
    await this.assertPlans(input.plans);
    const created = await this.servers.inTransaction(async (db) => {
      await this.gate.enter(db, admin);
      const row = await this.servers.insert(db, {
        name: input.name,
        url: input.url,
        headers: this.source.sealHeaders(input.headers ?? {}),
        enabled: input.enabled ?? true,
        plans: input.plans ?? [],
        approval: input.approval ?? null,
        toolPolicies: input.toolPolicies ?? {},
        toolPrices: input.toolPrices ?? {},
      });
      if (!row) throw nameTaken(input.name);
      await this.record(
        db,
        admin,
        'mcp_server.create',
        null,
        row,
        input.reason,
      );
      return row;
    });
    return this.afterChange(created);
  }

  async update(
    admin: SessionUser,
    id: string,
    input: UpdateMcpServerDto,
  ): Promise<AdminMcpServerDto> {
    if (input.url !== undefined) this.assertUrl(input.url);
    await this.assertPlans(input.plans);
    const changes: Partial<McpServerFields> = {
      name: input.name,
      url: input.url,
      headers:
        input.headers === undefined
          ? undefined
          : this.source.sealHeaders(input.headers ?? {}),
      enabled: input.enabled,
      plans: input.plans,
      approval: input.approval,
      toolPolicies: input.toolPolicies,
      toolPrices: input.toolPrices,
    };
    const updated = await this.servers.inTransaction(async (db) => {
      await this.gate.enter(db, admin);
      const before = await this.lockedOrNotFound(db, id);
      const after = await this.servers.update(db, id, changes);
      if (after === 'name_taken') throw nameTaken(input.name ?? '');
      if (!after) throw notFound();
      await this.record(
        db,
        admin,
        'mcp_server.update',
        before,
        after,
        input.reason,
      );
      return after;
    });
    return this.afterChange(updated);
  }

  async remove(
    admin: SessionUser,
    id: string,
    reason: string | undefined,
  ): Promise<void> {
    await this.servers.inTransaction(async (db) => {
      await this.gate.enter(db, admin);
      const before = await this.lockedOrNotFound(db, id);
      await this.servers.delete(db, id);
      await this.record(db, admin, 'mcp_server.delete', before, null, reason);
    });
    await this.watcher.sync();
  }

  /** Reads the server's tools now; a server that cannot be reached keeps its old tools and says why. */
  async refresh(id: string): Promise<AdminMcpServerDto> {
    const refreshed = await this.source.refresh(await this.found(id));
    if (!refreshed) throw notFound();
    return toDto(refreshed);
  }

  /** Reads the tools of a new or changed server before answering, and lets the watcher follow the change. */
  private async afterChange(row: StoredMcpServer): Promise<AdminMcpServerDto> {
    const refreshed = row.enabled ? await this.source.refresh(row) : row;
    void this.watcher.sync();
    return toDto(refreshed ?? row);
  }

  private async found(id: string): Promise<StoredMcpServer> {
    const row = isUuid(id) ? await this.servers.find(id) : null;
    if (!row) throw notFound();
    return row;
  }

  private async lockedOrNotFound(db: Db, id: string): Promise<StoredMcpServer> {
    const row = isUuid(id) ? await this.servers.lock(db, id) : null;
    if (!row) throw notFound();
    return row;
  }

  private assertUrl(url: string): void {
    try {
      this.connector.assertAllowedUrl(url);
    } catch (error) {
      if (!(error instanceof McpAddressRefused)) throw error;
      throw new AppError('validation_failed', error.message, {
        errors: [{ field: 'url', code: 'invalid', message: error.message }],
      });
    }
  }

  private async assertPlans(plans: string[] | undefined): Promise<void> {
    if (!plans?.length) return;
    const known = new Set(
      (await this.catalog.findAllPlans()).map((plan) => plan.code),
    );
    const unknown = plans.filter((code) => !known.has(code));
    if (unknown.length > 0)
      throw new AppError(
        'validation_failed',
        `plans names unknown plan codes: ${unknown.join(', ')}`,
        {
          errors: unknown.map((code) => ({
            field: `plans.${plans.indexOf(code)}`,
            code: 'unknown_plan',
            message: `${code} is not a plan code`,
          })),
        },
      );
  }

  private record(
    db: Db,
    admin: SessionUser,
    action: string,
    before: StoredMcpServer | null,
    after: StoredMcpServer | null,
    reason: string | undefined,
  ): Promise<void> {
    return this.audit.record(db, {
      adminId: admin.id,
      action,
      targetType: 'mcp_server',
      targetId: (after ?? before)?.id ?? '',
      before: before ? auditable(before) : undefined,
      after: after ? auditable(after) : undefined,
      reason: reason ?? null,
    });
  }
}

function toDto(row: StoredMcpServer): AdminMcpServerDto {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    headerNames: Object.keys(row.headers).sort(),
    enabled: row.enabled,
    plans: row.plans,
    approval: row.approval,
    toolPolicies: row.toolPolicies,
    toolPrices: row.toolPrices,
    tools: row.tools.map((tool) => ({
      id: `mcp.${row.name}.${tool.name}`,
      name: tool.name,
      title: tool.title ?? tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      readOnly: tool.readOnly,
      destructive: tool.destructive,
      approval: policyOf(row, tool),
      price: priceOf(row, tool.name),
    })),
    toolsReadAt: row.toolsReadAt?.toISOString() ?? null,
    toolsError: row.toolsError,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** What the audit log keeps: the settings, header names only, not the tools. */
function auditable(row: StoredMcpServer): Prisma.InputJsonValue {
  const settings: Partial<AdminMcpServerDto> = toDto(row);
  delete settings.tools;
  delete settings.toolsReadAt;
  return JSON.parse(JSON.stringify(settings)) as Prisma.InputJsonValue;
}

function notFound(): AppError {
  return new AppError('not_found', 'There is no such MCP server.');
}

function nameTaken(name: string): AppError {
  return new AppError(
    'conflict',
    `An MCP server named '${name}' exists already.`,
  );
}
