import { useState } from 'react';
import type { ChatEvent } from '../api/chat-stream';
import type { Schemas } from '../api/client';

export type ToolInfo = Schemas['ToolDto'];

/** A tool call of an answer, as the stream or the stored conversation tells it. */
export interface ToolView {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** Absent while it runs (or waits for approval). */
  status?: string;
  content?: string;
  /** The approval it waits for, until it is decided here or it ends. */
  approval?: { approvalId: string; expiresAt: string; decided?: string };
}

type ToolEvent = Extract<
  ChatEvent,
  { type: 'tool_call' | 'tool_approval' | 'tool_result' }
>;

/** The answer's calls after one more tool event. */
export function withToolEvent(tools: ToolView[], event: ToolEvent): ToolView[] {
  if (event.type === 'tool_call')
    return [
      ...tools,
      { id: event.id, tool: event.tool, arguments: event.arguments },
    ];
  return tools.map((call) =>
    call.id !== event.id
      ? call
      : event.type === 'tool_approval'
        ? {
            ...call,
            approval: {
              approvalId: event.approvalId,
              expiresAt: event.expiresAt,
            },
          }
        : { ...call, status: event.status, content: event.content },
  );
}

export const STATUS_WORDS: Record<string, string> = {
  ok: 'done',
  error: 'failed',
  denied: 'not approved',
  timeout: 'timed out',
  unknown: 'outcome unknown',
  running: 'running',
};

/**
 * The tool calls of one answer, each folded (its arguments and result inside). A call waiting for
 * approval offers Approve and Deny; the run goes on once one is chosen.
 */
export function ToolCallList({
  tools,
  onDecide,
}: {
  tools: ToolView[];
  onDecide: (call: ToolView, decision: 'approve' | 'deny') => Promise<void>;
}) {
  if (tools.length === 0) return null;
  return (
    <ul className="tool-calls" aria-label="Tool calls">
      {tools.map((call) => (
        <li key={call.id}>
          <details>
            <summary>
              Tool <code>{call.tool}</code>:{' '}
              {call.status
                ? (STATUS_WORDS[call.status] ?? call.status)
                : call.approval && !call.approval.decided
                  ? 'waiting for your approval'
                  : 'running…'}
            </summary>
            <p className="meta">Arguments</p>
            <pre>{JSON.stringify(call.arguments, null, 2)}</pre>
            {call.content !== undefined ? (
              <>
                <p className="meta">Result</p>
                <pre>{call.content}</pre>
              </>
            ) : null}
          </details>
          {call.approval && !call.approval.decided && !call.status ? (
            <ApprovalButtons call={call} onDecide={onDecide} />
          ) : null}
        </li>
      ))}
    </ul>
  );
}

function ApprovalButtons({
  call,
  onDecide,
}: {
  call: ToolView;
  onDecide: (call: ToolView, decision: 'approve' | 'deny') => Promise<void>;
}) {
  const [sending, setSending] = useState(false);
  const decide = (decision: 'approve' | 'deny') => {
    setSending(true);
    void onDecide(call, decision).finally(() => setSending(false));
  };
  return (
    <div
      className="turn-actions approval"
      role="group"
      aria-label={`Approve ${call.tool}?`}
    >
      <button
        type="button"
        disabled={sending}
        onClick={() => decide('approve')}
      >
        Approve
      </button>
      <button
        type="button"
        className="secondary"
        disabled={sending}
        onClick={() => decide('deny')}
      >
        Deny
      </button>
    </div>
  );
}

/** Which tools the model may call in the next answer. */
export function ToolPicker({
  available,
  selected,
  onChange,
  disabled,
}: {
  available: ToolInfo[] | null;
  selected: string[];
  onChange: (selected: string[]) => void;
  disabled: boolean;
}) {
  return (
    <details className="attach tools-picker">
      <summary>
        Tools{selected.length ? ` (${selected.length} on)` : ''}
      </summary>
      <fieldset>
        <legend className="visually-hidden">Tools the model may use</legend>
        {available === null ? (
          <p className="meta">Loading the tools…</p>
        ) : available.length === 0 ? (
          <p className="meta">No tool is available to you.</p>
        ) : (
          available.map((tool) => (
            <label key={tool.id} className="check">
              <input
                type="checkbox"
                checked={selected.includes(tool.id)}
                disabled={disabled}
                onChange={(event) =>
                  onChange(
                    event.target.checked
                      ? [...selected, tool.id]
                      : selected.filter((id) => id !== tool.id),
                  )
                }
              />
              {tool.title} <code>{tool.id}</code>
              {tool.approval === 'confirm' ? ' (asks you first)' : ''}
            </label>
          ))
        )}
      </fieldset>
    </details>
  );
}
