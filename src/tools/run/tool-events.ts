/** How one tool call ended: `unknown` when its instance died while it was out (it is never re-run). */
export type ToolStatus = 'ok' | 'error' | 'denied' | 'timeout' | 'unknown';

/**
 * What clients see of the tools in a run (server-sent events `tool_call`, `tool_result`), in this order
 * among the text for everyone: the live client, a client joined on another instance, and a replay. `id` is
 * the execution's id. docs/adr/0061-tools.md
 */
export type ToolEvent =
  | {
      type: 'tool_call';
      id: string;
      tool: string;
      arguments: Record<string, unknown>;
    }
  | {
      type: 'tool_approval';
      approvalId: string;
      id: string;
      tool: string;
      arguments: Record<string, unknown>;
      expiresAt: string;
    }
  | {
      type: 'tool_result';
      id: string;
      tool: string;
      status: ToolStatus;
      content: string;
    };

/** One execution as stored: where its events stand among the answer's text, and how it ended. */
export interface RecordedToolCall {
  id: string;
  step: number;
  callIndex: number;
  callId: string;
  tool: string;
  arguments: Record<string, unknown>;
  status: ToolStatus | 'running';
  content: string | null;
  textOffset: number;
  /** The approval it waited for (a `confirm` call asked of a client that can approve). */
  approval?: { id: string; expiresAt: string };
}

/**
 * The events of stored executions in the order a live run sent them: by text offset, then step; within
 * a step every call, then every approval asked, then every result (each in call order). An execution
 * still `running` has no result yet.
 */
export function eventsOf(
  calls: RecordedToolCall[],
): { offset: number; event: ToolEvent }[] {
  const sorted = [...calls].sort(
    (a, b) =>
      a.textOffset - b.textOffset ||
      a.step - b.step ||
      a.callIndex - b.callIndex,
  );
  const events: { offset: number; event: ToolEvent }[] = [];
  for (let start = 0; start < sorted.length;) {
    let end = start;
    while (end < sorted.length && sorted[end].step === sorted[start].step)
      end++;
    const step = sorted.slice(start, end);
    for (const call of step)
      events.push({
        offset: call.textOffset,
        event: {
          type: 'tool_call',
          id: call.id,
          tool: call.tool,
          arguments: call.arguments,
        },
      });
    for (const call of step)
      if (call.approval)
        events.push({
          offset: call.textOffset,
          event: {
            type: 'tool_approval',
            approvalId: call.approval.id,
            id: call.id,
            tool: call.tool,
            arguments: call.arguments,
            expiresAt: call.approval.expiresAt,
          },
        });
    for (const call of step)
      if (call.status !== 'running')
        events.push({
          offset: call.textOffset,
          event: {
            type: 'tool_result',
            id: call.id,
            tool: call.tool,
            status: call.status,
            content: call.content ?? '',
          },
        });
    start = end;
  }
  return events;
}

/**
 * A call's arguments with every object's keys in one order (sorted): the database (jsonb) keeps its own
 * order, so live events and replays both show this one.
 */
export function canonicalArguments(value: unknown): Record<string, unknown> {
  return sortKeys(value) as Record<string, unknown>;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  return value;
}
