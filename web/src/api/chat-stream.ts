import { failureOf } from './client';
import type { Schemas } from './client';

export type ChatRequest = Schemas['ChatRequestDto'];
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  credits: number;
}
export type ChatEvent =
  | { type: 'meta'; conversationId: string; requestId: string; model: string }
  | { type: 'delta'; text: string }
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
      expiresAt: string;
    }
  | {
      type: 'tool_result';
      id: string;
      status: string;
      content: string;
    }
  | { type: 'usage'; usage: Usage }
  | { type: 'error'; code: string; message: string }
  | { type: 'done'; status: string };

/** The request options that make openapi-fetch hand an answer route's body back as a stream of server-sent events. */
export const EVENT_STREAM = {
  parseAs: 'stream',
  headers: { Accept: 'text/event-stream' },
} as const;

/**
 * The events of a streamed answer (chat, regenerate, edit, Skill run); a refusal before the first byte
 * (quota, rate limit, unknown model) is thrown, as `refusal` makes it of the problem openapi-fetch read.
 */
export async function* eventsOrRefusal(
  result: { data?: unknown; error?: unknown; response: Response },
  refusal: (problem: unknown) => Error = (problem) =>
    failureOf(result.response, problem),
): AsyncGenerator<ChatEvent> {
  if (!result.response.ok || !result.data) throw refusal(result.error);
  yield* eventsOf(result.data as ReadableStream<Uint8Array>);
}

/** Server-sent events, frame by frame (`event:` and `data:` lines, a blank line between frames). */
export async function* eventsOf(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<ChatEvent> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseFrame(frame);
      if (event) yield event;
    }
  }
}

function parseFrame(frame: string): ChatEvent | null {
  let name = 'message';
  let data = '';
  for (const line of frame.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data += line.slice(5).trim();
  }
  if (!data) return null;
  const payload = JSON.parse(data) as Record<string, unknown>;
  switch (name) {
    case 'meta':
      return {
        type: 'meta',
        conversationId: String(payload.conversationId),
        requestId: String(payload.requestId),
        model: String(payload.model),
      };
    case 'delta':
      return { type: 'delta', text: textOf(payload.text ?? '') };
    case 'tool_call':
      return {
        type: 'tool_call',
        id: textOf(payload.id ?? ''),
        tool: textOf(payload.tool ?? ''),
        arguments:
          typeof payload.arguments === 'object' && payload.arguments !== null
            ? (payload.arguments as Record<string, unknown>)
            : {},
      };
    case 'tool_approval':
      return {
        type: 'tool_approval',
        approvalId: textOf(payload.approvalId ?? ''),
        id: textOf(payload.id ?? ''),
        expiresAt: textOf(payload.expiresAt ?? ''),
      };
    case 'tool_result':
      return {
        type: 'tool_result',
        id: textOf(payload.id ?? ''),
        status: textOf(payload.status ?? 'error'),
        content: textOf(payload.content ?? ''),
      };
    case 'usage':
      return { type: 'usage', usage: payload as unknown as Usage };
    case 'error':
      return {
        type: 'error',
        code: textOf(payload.code ?? 'error'),
        message: textOf(
          payload.detail ?? payload.message ?? 'The answer failed.',
        ),
      };
    case 'done':
      return { type: 'done', status: textOf(payload.status ?? 'completed') };
    default:
      return null;
  }
}

/** A field of an event as text: a string as it is, anything else as JSON (as String() gives for numbers, booleans and null). */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
