import { ApiProperty } from '@nestjs/swagger';
import { Prisma } from '../../infra/prisma/generated/client';
import { isRecord } from '../../models/providers/upstream-error';
import { canonicalArguments } from '../run/tool-events';

export const TOOL_CALL_STATUSES = [
  'running',
  'ok',
  'error',
  'denied',
  'timeout',
  'unknown',
] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** Whether a stored status is one of ours (JSON read back is not trusted blindly). */
export function isToolCallStatus(value: unknown): value is ToolCallStatus {
  return (TOOL_CALL_STATUSES as readonly unknown[]).includes(value);
}

/**
 * A tool call kept as JSON (a share's snapshot, a forked message), read back: its tool, arguments and
 * status, or null when it is not of that shape.
 */
export function readStoredToolCall(
  value: unknown,
): Pick<ToolCallDto, 'tool' | 'arguments' | 'status'> | null {
  if (
    !isRecord(value) ||
    typeof value.tool !== 'string' ||
    !isToolCallStatus(value.status)
  )
    return null;
  return {
    tool: value.tool,
    arguments: isRecord(value.arguments) ? value.arguments : {},
    status: value.status,
  };
}

/** One tool call a run made, as GET /v1/conversations/:id shows it on the answer. */
export class ToolCallDto {
  /** The execution's id (the `id` of its `tool_call` and `tool_result` events). */
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'files.search' })
  tool!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  arguments!: Record<string, unknown>;

  /** `running` while out; `unknown` when its instance died while it was out (it is never run again). */
  @ApiProperty({ enum: TOOL_CALL_STATUSES })
  status!: ToolCallStatus;

  /** What the model read back (cut at TOOL_RESULT_MAX_CHARS). */
  content!: string;
}

/** What a tool call is read with, on a run (`chatRequest: { select: { toolExecutions: TOOL_CALLS } }`). */
export const TOOL_CALLS = {
  // Mutable: Prisma's orderBy type refuses the readonly array `as const` would make of it.
  orderBy: [
    { step: 'asc' },
    { callIndex: 'asc' },
  ] as Prisma.ToolExecutionOrderByWithRelationInput[],
  select: {
    id: true,
    toolId: true,
    arguments: true,
    status: true,
    content: true,
  },
} as const;

type ToolCallRow = Prisma.ToolExecutionGetPayload<{
  select: (typeof TOOL_CALLS)['select'];
}>;

/** A message's tool calls: its run's, on an answer; none on any other message. */
export function toolCallsOf(
  role: string,
  rows: ToolCallRow[] | undefined,
): ToolCallDto[] {
  if (role !== 'assistant') return [];
  return (rows ?? []).map((row) => ({
    id: row.id,
    tool: row.toolId,
    arguments: canonicalArguments(row.arguments),
    status: row.status as ToolCallDto['status'],
    content: row.content ?? '',
  }));
}
