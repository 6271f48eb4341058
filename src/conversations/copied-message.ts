import { isRecord } from '../models/providers/upstream-error';
import { readStoredToolCall, ToolCallDto } from '../tools/dto/tool-call.dto';

/**
 * What a message copied from a shared conversation (a fork) keeps of the original, having no run of its
 * own (`Message.copiedFrom`): the model that wrote it and its tool calls, without their results (a
 * snapshot never holds them). docs/adr/0064-share-links-and-feedback.md
 */
export interface CopiedMessage {
  model: string | null;
  toolCalls: ToolCallDto[];
}

/** The stored JSON read back; anything not of this shape counts as absent (null). */
export function readCopiedMessage(value: unknown): CopiedMessage | null {
  if (!isRecord(value)) return null;
  const model = typeof value.model === 'string' ? value.model : null;
  const calls = Array.isArray(value.toolCalls) ? value.toolCalls : [];
  return {
    model,
    toolCalls: calls.flatMap((call) => {
      const read = readStoredToolCall(call);
      return read && isRecord(call) && typeof call.id === 'string'
        ? [{ id: call.id, ...read, content: '' }]
        : [];
    }),
  };
}
