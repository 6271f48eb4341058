import { Injectable } from '@nestjs/common';
import { Prisma } from '../../infra/prisma/generated/client';
import { PrismaService } from '../../infra/prisma/prisma.service';
import {
  canonicalArguments,
  RecordedToolCall,
  ToolStatus,
} from './tool-events';

/** An execution about to be sent. */
export interface NewToolExecution {
  id: string;
  chatRequestId: string;
  conversationId: string;
  userId: string;
  step: number;
  callIndex: number;
  callId: string;
  toolId: string;
  arguments: Record<string, unknown>;
  textOffset: number;
}

const RECORDED = {
  id: true,
  chatRequestId: true,
  step: true,
  callIndex: true,
  callId: true,
  toolId: true,
  arguments: true,
  status: true,
  content: true,
  textOffset: true,
  approval: { select: { id: true, expiresAt: true } },
} as const;

type Row = Prisma.ToolExecutionGetPayload<{ select: typeof RECORDED }>;

/** The tool executions of runs: written before a call is sent, finished once with its outcome. */
@Injectable()
export class ToolExecutionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Records the executions of one step while their run is still streaming; answers the ids recorded. An
   * execution already recorded for the same run, step and call (the unique key) is not recorded again, and
   * nothing is recorded for a run that ended meanwhile (swept while its instance had lost the database):
   * what is not answered is never sent.
   */
  async start(executions: NewToolExecution[]): Promise<Set<string>> {
    if (executions.length === 0) return new Set();
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO "ToolExecution" (id, "chatRequestId", "conversationId", "userId", step, "callIndex", "callId",
                                   "toolId", arguments, "textOffset")
      SELECT e.id, e."chatRequestId", e."conversationId", e."userId", e.step, e."callIndex", e."callId", e."toolId",
             e.arguments, e."textOffset"
        FROM jsonb_to_recordset(${JSON.stringify(executions)}::jsonb) AS e(
               id uuid, "chatRequestId" uuid, "conversationId" uuid, "userId" uuid, step integer,
               "callIndex" integer, "callId" text, "toolId" text, arguments jsonb, "textOffset" integer)
       WHERE EXISTS (SELECT 1 FROM "ChatRequest" r WHERE r.id = e."chatRequestId" AND r.status = 'streaming')
      ON CONFLICT ("chatRequestId", step, "callIndex") DO NOTHING
      RETURNING id::text`;
    return new Set(rows.map((row) => row.id));
  }

  /** The outcome, once: an execution no longer running (swept as unknown) keeps what it has. */
  async finish(id: string, status: ToolStatus, content: string): Promise<void> {
    await this.prisma.toolExecution.updateMany({
      where: { id, status: 'running' },
      data: { status, content, finishedAt: new Date() },
    });
  }

  /**
   * Executions still out in runs that ended anyway (swept: their instance died) end as `unknown`; they
   * are never run again.
   */
  async markOrphansUnknown(): Promise<number> {
    const { count } = await this.prisma.toolExecution.updateMany({
      where: {
        status: 'running',
        chatRequest: { status: { not: 'streaming' } },
      },
      data: {
        status: 'unknown',
        content:
          'The service stopped while this call was out: whether it ran is unknown.',
        finishedAt: new Date(),
      },
    });
    return count;
  }

  /** Every execution of these runs, by run. */
  async ofRuns(
    chatRequestIds: string[],
  ): Promise<Map<string, RecordedToolCall[]>> {
    const byRun = new Map<string, RecordedToolCall[]>();
    if (chatRequestIds.length === 0) return byRun;
    const rows = await this.prisma.toolExecution.findMany({
      where: { chatRequestId: { in: chatRequestIds } },
      select: RECORDED,
      orderBy: [{ step: 'asc' }, { callIndex: 'asc' }],
    });
    for (const row of rows) {
      const list = byRun.get(row.chatRequestId) ?? [];
      list.push(toRecorded(row));
      byRun.set(row.chatRequestId, list);
    }
    return byRun;
  }
}

function toRecorded(row: Row): RecordedToolCall {
  return {
    id: row.id,
    step: row.step,
    callIndex: row.callIndex,
    callId: row.callId,
    tool: row.toolId,
    arguments: canonicalArguments(row.arguments),
    status: row.status as RecordedToolCall['status'],
    content: row.content,
    textOffset: row.textOffset,
    ...(row.approval
      ? {
          approval: {
            id: row.approval.id,
            expiresAt: row.approval.expiresAt.toISOString(),
          },
        }
      : {}),
  };
}
