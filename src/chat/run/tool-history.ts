import { ChatMessage } from '../../models/providers/model-provider';
import { BranchMessage } from '../../conversations/conversations.repository';
import { RecordedToolCall } from '../../tools/run/tool-events';

/**
 * Stored messages as the model receives them again: an answer whose run called tools becomes, per step,
 * the assistant's calls and one `tool` message per result, then the answer's text, so a later turn
 * remembers what the tools said (docs/adr/0061-tools.md). Calls are named by their execution ids, which
 * pair each call with its result whatever ids the model once gave them.
 */
export function toModelMessages(
  messages: BranchMessage[],
  wireNameFor: ((toolId: string) => string) | null,
): ChatMessage[] {
  return messages.flatMap((message): ChatMessage[] => {
    if (!message.toolCalls?.length)
      return [{ role: message.role, content: message.content }];
    if (!wireNameFor) return [asText(message, message.toolCalls)];
    const expanded: ChatMessage[] = [];
    for (const step of byStep(message.toolCalls)) {
      expanded.push({
        role: 'assistant',
        content: '',
        toolCalls: step.map((call) => ({
          id: call.id,
          name: wireNameFor(call.tool),
          arguments: JSON.stringify(call.arguments),
        })),
      });
      for (const call of step)
        expanded.push({
          role: 'tool',
          toolCallId: call.id,
          content: resultText(call),
        });
    }
    if (message.content)
      expanded.push({ role: 'assistant', content: message.content });
    return expanded;
  });
}

/**
 * A run without tools: the calls as text before the answer (Anthropic refuses tool blocks in a request
 * that defines no tools, and the model needs no tool format to read what happened).
 */
function asText(
  message: BranchMessage,
  calls: RecordedToolCall[],
): ChatMessage {
  const lines = calls.map(
    (call) =>
      `- ${call.tool}(${JSON.stringify(call.arguments)}) answered: ${resultText(call)}`,
  );
  return {
    role: 'assistant',
    content: `[Tools called for this answer]\n${lines.join('\n')}\n\n${message.content}`,
  };
}

/** What the model reads as a call's result: the content, its status named when it is not `ok`. */
export function resultText(
  call: Pick<RecordedToolCall, 'status' | 'content'>,
): string {
  const content = call.content ?? '';
  return call.status === 'ok' ? content : `[${call.status}] ${content}`;
}

function byStep(calls: RecordedToolCall[]): RecordedToolCall[][] {
  const steps = new Map<number, RecordedToolCall[]>();
  for (const call of [...calls].sort(
    (a, b) => a.step - b.step || a.callIndex - b.callIndex,
  ))
    steps.set(call.step, [...(steps.get(call.step) ?? []), call]);
  return [...steps.values()];
}
