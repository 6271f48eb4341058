import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChatMessage,
  GenerationEvent,
  GenerationRequest,
  ModelProvider,
  ToolCall,
} from './model-provider';
import { wireNameOf } from './tool-names';

/**
 * The built-in `local/echo` model: a real streaming provider that needs no key. It answers
 * "Echo: <last user message>" as written (line breaks kept), word by word with a small delay, and reports
 * token usage (one token per whitespace-separated word), deterministically, so the service works and can be tried offline. With
 * tools offered, `/tool <toolId> <JSON arguments>` calls that tool, and the echo then answers its result.
 */
export class LocalEchoProvider implements ModelProvider {
  readonly name = 'local';

  constructor(private readonly delayMs: number) {}

  isConfigured(): boolean {
    return true;
  }

  async *stream(request: GenerationRequest): AsyncIterable<GenerationEvent> {
    const last = request.messages.at(-1);
    const call = request.tools?.length ? toolCommand(last) : undefined;
    if (call) {
      yield { type: 'tool_call', call };
      yield {
        type: 'usage',
        inputTokens: countTokens(
          request.messages.map((message) => message.content).join(' '),
        ),
        outputTokens: 1,
      };
      return;
    }
    const lastUser = [...request.messages]
      .reverse()
      .find((message) => message.role === 'user');
    // After a tool's result, the echo answers with the result.
    const echoed =
      last?.role === 'tool'
        ? `Tool result: ${last.content}`
        : (lastUser?.content ?? '');
    const chunks = echoChunks(echoed).slice(0, request.maxOutputTokens);
    let produced = 0;
    for (const chunk of chunks) {
      if (request.signal?.aborted) break;
      if (produced > 0 && this.delayMs > 0) await sleep(this.delayMs);
      yield { type: 'text', text: chunk };
      produced += 1;
    }
    yield {
      type: 'usage',
      inputTokens: countTokens(
        request.messages.map((message) => message.content).join(' '),
      ),
      outputTokens: produced,
    };
  }
}

/**
 * "Echo: " and then the text exactly as written, a word per chunk: each chunk carries the whitespace before
 * its word (line breaks, indentation), the last one any whitespace after, so Markdown typed into the
 * two-command start comes back as Markdown.
 */
export function echoChunks(text: string): string[] {
  const words = text.match(/\s*\S+/g) ?? [];
  const trailing = /\s*$/.exec(text)?.[0] ?? '';
  if (words.length > 0) {
    words[0] = ` ${words[0]}`;
    words[words.length - 1] += trailing;
  }
  return ['Echo:', ...words];
}

/**
 * `/tool <toolId> <JSON arguments>` as the latest user message (with tools offered): a call of that tool,
 * so the whole tool loop can be seen without a key.
 */
function toolCommand(message: ChatMessage | undefined): ToolCall | undefined {
  if (message?.role !== 'user') return undefined;
  const command = /^\/tool\s+(\S+)\s*([\s\S]*)$/.exec(message.content.trim());
  if (!command) return undefined;
  return {
    id: 'echo-call-1',
    name: wireNameOf(command[1]),
    arguments: command[2].trim() || '{}',
  };
}

function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
