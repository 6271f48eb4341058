import { Injectable } from '@nestjs/common';
import { Prisma } from '../../infra/prisma/generated/client';
import { PrismaService } from '../../infra/prisma/prisma.service';
import { McpToolInfo } from './mcp-tools';

/** An MCP server's row, header values still encrypted. */
export interface StoredMcpServer {
  id: string;
  name: string;
  url: string;
  headers: Record<string, string>;
  enabled: boolean;
  plans: string[];
  approval: 'auto' | 'confirm' | null;
  toolPolicies: Record<string, 'auto' | 'confirm'>;
  toolPrices: Record<string, number>;
  tools: McpToolInfo[];
  toolsReadAt: Date | null;
  toolsError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export type McpServerFields = Pick<
  StoredMcpServer,
  | 'name'
  | 'url'
  | 'headers'
  | 'enabled'
  | 'plans'
  | 'approval'
  | 'toolPolicies'
  | 'toolPrices'
>;

const SERVER = {
  id: true,
  name: true,
  url: true,
  headers: true,
  enabled: true,
  plans: true,
  approval: true,
  toolPolicies: true,
  toolPrices: true,
  tools: true,
  toolsReadAt: true,
  toolsError: true,
  createdAt: true,
  updatedAt: true,
} as const;

type Row = Prisma.McpServerGetPayload<{ select: typeof SERVER }>;

@Injectable()
export class McpServersRepository {
  constructor(private readonly prisma: PrismaService) {}

  async list(): Promise<StoredMcpServer[]> {
    const rows = await this.prisma.mcpServer.findMany({
      select: SERVER,
      orderBy: { name: 'asc' },
    });
    return rows.map(toStored);
  }

  /** The enabled servers whose tools users of `planCode` may use. */
  async enabledFor(planCode: string): Promise<StoredMcpServer[]> {
    const rows = await this.prisma.mcpServer.findMany({
      where: {
        enabled: true,
        OR: [{ plans: { isEmpty: true } }, { plans: { has: planCode } }],
      },
      select: SERVER,
      orderBy: { name: 'asc' },
    });
    return rows.map(toStored);
  }

  async find(id: string): Promise<StoredMcpServer | null> {
    const row = await this.prisma.mcpServer.findUnique({
      where: { id },
      select: SERVER,
    });
    return row ? toStored(row) : null;
  }

  /** The server, its row locked until the transaction ends (null when it does not exist). */
  async lock(
    db: Prisma.TransactionClient,
    id: string,
  ): Promise<StoredMcpServer | null> {
    const [row] = await db.$queryRaw<
      { id: string }[]
    >`SELECT id FROM "McpServer" WHERE id = ${id}::uuid FOR UPDATE`;
    if (!row) return null;
    const locked = await db.mcpServer.findUnique({
      where: { id },
      select: SERVER,
    });
    return locked ? toStored(locked) : null;
  }

  /** The new server, or null when its name is taken. */
  async insert(
    db: Prisma.TransactionClient,
    fields: McpServerFields,
  ): Promise<StoredMcpServer | null> {
    try {
      return toStored(
        await db.mcpServer.create({ data: fields, select: SERVER }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /** The server as changed, null when it does not exist, or 'name_taken'. */
  async update(
    db: Prisma.TransactionClient,
    id: string,
    fields: Partial<McpServerFields>,
  ): Promise<StoredMcpServer | null | 'name_taken'> {
    try {
      return toStored(
        await db.mcpServer.update({
          where: { id },
          data: fields,
          select: SERVER,
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) return 'name_taken';
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(db: Prisma.TransactionClient, id: string): Promise<boolean> {
    const { count } = await db.mcpServer.deleteMany({ where: { id } });
    return count > 0;
  }

  /** What the last reading of the server's tools found (its tools), or why it failed (the old ones kept). */
  async recordTools(
    id: string,
    outcome: { tools: McpToolInfo[] } | { error: string },
  ): Promise<StoredMcpServer | null> {
    const data =
      'tools' in outcome
        ? {
            tools: outcome.tools as unknown as Prisma.InputJsonValue,
            toolsReadAt: new Date(),
            toolsError: null,
          }
        : { toolsError: outcome.error.slice(0, 500) };
    const { count } = await this.prisma.mcpServer.updateMany({
      where: { id },
      data,
    });
    return count > 0 ? this.find(id) : null;
  }

  inTransaction<T>(
    work: (db: Prisma.TransactionClient) => Promise<T>,
  ): Promise<T> {
    return this.prisma.$transaction(work);
  }
}

function toStored(row: Row): StoredMcpServer {
  return {
    ...row,
    headers: row.headers as Record<string, string>,
    approval: row.approval as StoredMcpServer['approval'],
    toolPolicies: row.toolPolicies as StoredMcpServer['toolPolicies'],
    toolPrices: row.toolPrices as StoredMcpServer['toolPrices'],
    tools: row.tools as unknown as McpToolInfo[],
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'P2002';
}

function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'P2025';
}
