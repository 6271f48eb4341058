import { LEADING_USER_PLACEHOLDER } from './anthropic.provider';
import {
  ChatMessage,
  GenerationEvent,
  GenerationRequest,
  ToolCall,
  ToolSpec,
} from './model-provider';
import {
  SseModelProvider,
  StreamDecoder,
  TransportSettings,
  UpstreamCall,
  UpstreamSettings,
} from './sse-provider';
import {
  errorMessageOf,
  isRecord,
  parseEventJson,
  UpstreamError,
  UpstreamRefusal,
} from './upstream-error';

/**
 * Google's Gemini API (v1beta): `POST <baseUrl>/models/<model>:streamGenerateContent?alt=sse` with the key
 * in `x-goog-api-key` (not the `key` query parameter: a URL ends up in proxy and access logs). `alt=sse`
 * makes the stream server-sent events, one GenerateContentResponse per event; without it the answer is one
 * JSON array, readable only once complete. `cacheablePrefix` is not sent: Gemini caches a repeated prefix
 * implicitly (and reports it as `cachedContentTokenCount`); explicit caching needs a cachedContents
 * resource created beforehand, which an adapter holding no state cannot manage.
 */
export class GeminiProvider extends SseModelProvider {
  constructor(
    name: string,
    upstream: UpstreamSettings,
    transport: TransportSettings,
  ) {
    super(name, upstream, transport);
  }

  protected call(request: GenerationRequest): UpstreamCall {
    return {
      path: `/models/${encodeURIComponent(request.upstreamModel)}:streamGenerateContent?alt=sse`,
      headers: {
        ...(request.apiKey === undefined
          ? {}
          : { 'x-goog-api-key': request.apiKey }),
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: geminiRequestBody(request),
    };
  }

  protected decoder(): StreamDecoder {
    return new GeminiStreamDecoder();
  }
}

export function geminiRequestBody(request: GenerationRequest): string {
  const { systemInstruction, contents } = toGeminiPrompt(request.messages);
  return JSON.stringify({
    contents,
    ...(systemInstruction === undefined ? {} : { systemInstruction }),
    generationConfig: { maxOutputTokens: request.maxOutputTokens },
    ...(request.tools?.length
      ? {
          tools: [
            { functionDeclarations: request.tools.map(toFunctionDeclaration) },
          ],
        }
      : {}),
  });
}

/**
 * Gemini 3 refuses (HTTP 400 "Function call is missing a thought_signature") a history whose function
 * calls lack the `thoughtSignature` the model gave them. ToolCall does not carry it (the service replays
 * calls under its own execution ids, possibly made by another provider), so every replayed call gets the
 * value Google documents for calls it did not sign (ai.google.dev/gemini-api/docs/thought-signatures);
 * earlier models ignore it.
 */
export const UNSIGNED_CALL_SIGNATURE = 'skip_thought_signature_validator';

type TextPart = { text: string };
type FunctionCallPart = {
  functionCall: { name: string; args: Record<string, unknown> };
  thoughtSignature: string;
};
type FunctionResponsePart = {
  functionResponse: { name: string; response: { content: string } };
};
type GeminiPart = TextPart | FunctionCallPart | FunctionResponsePart;
export type GeminiContent = { role: 'user' | 'model'; parts: GeminiPart[] };

/**
 * The service's messages in the shape generateContent requires:
 * - every system message goes to `systemInstruction`, in order, joined by a blank line (omitted when none);
 * - the assistant's turns are `model` turns, its tool calls `functionCall` parts on them;
 * - a tool's result is a `functionResponse` part in a `user` turn, under the name of the call it answers:
 *   Gemini pairs results with calls by name (and order), the tool message only has the call's id;
 * - messages without visible text are left out (Gemini refuses an empty text part);
 * - consecutive turns of one role are merged into one (Gemini requires user and model to alternate);
 * - a first turn by the model gets LEADING_USER_PLACEHOLDER in front of it (Gemini has refused a
 *   conversation that does not open with a user turn).
 */
export function toGeminiPrompt(messages: readonly ChatMessage[]): {
  systemInstruction?: { parts: TextPart[] };
  contents: GeminiContent[];
} {
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  /** The name of each call seen so far, by id: the latest call wins should a model reuse an id. */
  const callNames = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'system') {
      if (message.content.trim()) system.push(message.content);
      continue;
    }
    const parts = partsOf(message, callNames);
    if (parts.length === 0) continue;
    const role = message.role === 'assistant' ? 'model' : 'user';
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  if (contents[0]?.role === 'model')
    contents.unshift({
      role: 'user',
      parts: [{ text: LEADING_USER_PLACEHOLDER }],
    });
  return {
    ...(system.length > 0
      ? { systemInstruction: { parts: [{ text: system.join('\n\n') }] } }
      : {}),
    contents,
  };
}

/** A message's parts: its text (when it has visible text) and its tool calls, or its tool result. */
function partsOf(
  message: ChatMessage,
  callNames: Map<string, string>,
): GeminiPart[] {
  if (message.role === 'tool') return [toolResultPart(message, callNames)];
  const parts: GeminiPart[] = message.content.trim()
    ? [{ text: message.content }]
    : [];
  if (message.role !== 'assistant') return parts;
  for (const call of message.toolCalls ?? []) {
    callNames.set(call.id, call.name);
    parts.push({
      functionCall: { name: call.name, args: argumentsOf(call.arguments) },
      thoughtSignature: UNSIGNED_CALL_SIGNATURE,
    });
  }
  return parts;
}

/**
 * A tool result as a `functionResponse` (its `response` must be an object: the result text goes in
 * `content`). A result whose call is not in the history has no name to go under, and Gemini refuses a
 * nameless or unmatched functionResponse: it is sent as text instead, so the model still reads it.
 */
function toolResultPart(
  message: ChatMessage,
  callNames: Map<string, string>,
): GeminiPart {
  const name =
    message.toolCallId === undefined
      ? undefined
      : callNames.get(message.toolCallId);
  if (name === undefined) return { text: `[Tool result]\n${message.content}` };
  return {
    functionResponse: { name, response: { content: message.content } },
  };
}

/** The arguments' JSON text as the object `args` must be (`{}` when the model wrote none, or no object). */
function argumentsOf(text: string): Record<string, unknown> {
  try {
    const value: unknown = text.trim() ? JSON.parse(text) : {};
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

function toFunctionDeclaration(tool: ToolSpec): Record<string, unknown> {
  const parameters = geminiParameters(tool.parameters);
  return {
    name: tool.name,
    description: tool.description,
    ...(parameters === undefined ? {} : { parameters }),
  };
}

/**
 * Keywords Gemini's `parameters` (an OpenAPI 3.0 Schema subset, not JSON Schema) refuses with HTTP 400
 * `Invalid JSON payload received. Unknown name "..."`: `$schema`, which MCP servers and schema generators
 * (zod-to-json-schema) put at the top, and `additionalProperties`, which versions of the API refused and
 * `additionalProperties: false` is on most generated object schemas. Dropping them only loosens validation
 * the service does itself on the arguments.
 */
const UNSUPPORTED_SCHEMA_KEYWORDS = new Set([
  '$schema',
  'additionalProperties',
]);
/** Keywords whose value maps names (a property may be called `additionalProperties`) to schemas. */
const NAMED_SCHEMAS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
]);
/** Keywords whose value is data, not a schema: left as they are. */
const DATA_KEYWORDS = new Set([
  'enum',
  'const',
  'default',
  'example',
  'examples',
]);

/**
 * A tool's JSON Schema as Gemini takes it, or undefined for a tool without arguments: Gemini refuses an
 * object schema without properties ("properties: should be non-empty for OBJECT type"), and a function
 * declared without `parameters` takes none.
 */
export function geminiParameters(
  schema: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const stripped = stripSchema(schema);
  const properties = stripped.properties;
  if (
    stripped.type === 'object' &&
    (!isRecord(properties) || Object.keys(properties).length === 0)
  )
    return undefined;
  return stripped;
}

/** A schema without the keywords Gemini refuses, at every depth. */
function stripSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (UNSUPPORTED_SCHEMA_KEYWORDS.has(keyword)) continue;
    if (DATA_KEYWORDS.has(keyword)) out[keyword] = value;
    else if (NAMED_SCHEMAS.has(keyword) && isRecord(value))
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, stripNested(sub)]),
      );
    else out[keyword] = stripNested(value);
  }
  return out;
}

/** A keyword's value: a schema (`items`, `not`), a list of schemas (`anyOf`), or a plain value. */
function stripNested(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNested);
  return isRecord(value) ? stripSchema(value) : value;
}

/** Finish reasons of an answer the model ended normally; any other reason, with nothing produced, is a refusal. */
const ANSWERED = new Set(['STOP', 'MAX_TOKENS']);

/** Finish reasons of Google's safety and policy systems: a refusal, not retried nor sent elsewhere. */
const REFUSED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
]);

/**
 * GenerateContentResponse chunks → events: the text parts of the first candidate are text (thought
 * summaries, `thought: true`, are not the answer); `functionCall` parts are tool calls, complete in one
 * part, reported at the end in order under ids made here (`call_1`, `call_2`, ...: Gemini gives none, and
 * the service pairs results with calls by its own ids anyway). Every chunk repeats the `usageMetadata` so
 * far: the last one is reported. The chunk carrying a `finishReason` completes the response (Gemini sends
 * the final usage in that same chunk); a refusal (SAFETY, RECITATION, PROHIBITED_CONTENT, ... with neither
 * text nor tool calls), a blocked prompt (`promptFeedback.blockReason`, no candidates) and an `error`
 * chunk fail it, and a body that ends before any finishReason was cut short.
 */
export class GeminiStreamDecoder implements StreamDecoder {
  private readonly toolCalls: ToolCall[] = [];
  private usage: GenerationEvent | undefined;
  private answered = false;

  event(
    data: string,
    _event: string | undefined,
    out: GenerationEvent[],
  ): boolean {
    const chunk = parseEventJson(data);
    if (chunk.error !== undefined && chunk.error !== null)
      throw new UpstreamError(
        `error event: ${errorMessageOf(chunk) ?? 'no message'}`,
      );
    this.readUsage(chunk.usageMetadata);
    const blockReason = blockReasonOf(chunk.promptFeedback);
    if (blockReason !== undefined)
      throw new UpstreamRefusal(`prompt blocked: ${blockReason}`);
    const candidate = firstCandidate(chunk);
    if (candidate === undefined) return false;
    this.readParts(candidate.content, out);
    const finishReason = candidate.finishReason;
    if (typeof finishReason !== 'string' || !finishReason) return false;
    if (!this.answered && !ANSWERED.has(finishReason))
      throw REFUSED.has(finishReason)
        ? new UpstreamRefusal(`no answer: finishReason ${finishReason}`)
        : new UpstreamError(`no answer: finishReason ${finishReason}`);
    for (const call of this.toolCalls) out.push({ type: 'tool_call', call });
    if (this.usage) out.push(this.usage);
    return true;
  }

  end(): void {
    throw new UpstreamError(
      'stream ended before the model finished (no finishReason)',
    );
  }

  private readParts(content: unknown, out: GenerationEvent[]): void {
    if (!isRecord(content) || !Array.isArray(content.parts)) return;
    for (const part of content.parts as unknown[]) {
      if (!isRecord(part) || part.thought === true) continue;
      if (typeof part.text === 'string' && part.text) {
        out.push({ type: 'text', text: part.text });
        this.answered = true;
      }
      if (isRecord(part.functionCall)) {
        this.toolCalls.push(this.toolCallOf(part.functionCall));
        this.answered = true;
      }
    }
  }

  private toolCallOf(functionCall: Record<string, unknown>): ToolCall {
    const { name, args } = functionCall;
    if (typeof name !== 'string' || !name)
      throw new UpstreamError('a functionCall came without its name');
    return {
      id: `call_${this.toolCalls.length + 1}`,
      name,
      arguments: JSON.stringify(args ?? {}),
    };
  }

  /**
   * `{promptTokenCount, candidatesTokenCount, cachedContentTokenCount?, thoughtsTokenCount?}`; a count
   * of zero is left out of the JSON. The prompt count includes the cached tokens (as inputTokens does);
   * thinking tokens are billed as output but are not in candidatesTokenCount, so they are added to it.
   */
  private readUsage(usage: unknown): void {
    if (!isRecord(usage) || typeof usage.promptTokenCount !== 'number') return;
    const cached = usage.cachedContentTokenCount;
    this.usage = {
      type: 'usage',
      inputTokens: usage.promptTokenCount,
      outputTokens:
        countOf(usage.candidatesTokenCount) + countOf(usage.thoughtsTokenCount),
      ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}),
    };
  }
}

function countOf(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** `promptFeedback.blockReason`: set when the prompt itself was blocked (the chunk then has no candidates). */
function blockReasonOf(feedback: unknown): string | undefined {
  if (!isRecord(feedback)) return undefined;
  const reason = feedback.blockReason;
  return typeof reason === 'string' && reason ? reason : undefined;
}

/** `candidates[0]` (one is asked for: candidateCount defaults to 1). */
function firstCandidate(
  chunk: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const candidates = chunk.candidates;
  if (!Array.isArray(candidates)) return undefined;
  const first: unknown = candidates[0];
  return isRecord(first) ? first : undefined;
}
