// docs/adr/0026-model-providers.md
import { connect as netConnect, isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import type { SessionOptions } from 'node:http2';
import {
  BedrockRuntimeClient,
  BedrockRuntimeClientConfig,
  ContentBlock,
  ConverseStreamCommand,
  ConverseStreamCommandInput,
  ConverseStreamOutput,
  Message,
  SystemContentBlock,
  TokenUsage,
  Tool,
  ToolUseBlock,
} from '@aws-sdk/client-bedrock-runtime';
import type { NodeHttp2HandlerOptions } from '@smithy/node-http-handler';
import { LEADING_USER_PLACEHOLDER } from './anthropic.provider';
import {
  ChatMessage,
  GenerationEvent,
  GenerationRequest,
  ModelProvider,
  ProviderError,
  ToolCall,
  ToolSpec,
} from './model-provider';
import { retryAfterMs, TransportSettings } from './sse-provider';
import { isRecord, shortReason, UpstreamError } from './upstream-error';

/** Static AWS credentials (an IAM user's key, or a role's temporary key with its session token). */
export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockSettings {
  region: string;
  /** Replaces the regional endpoint (a VPC endpoint, or a loopback fake in tests). */
  endpoint?: string;
  credentials: BedrockCredentials;
}

/**
 * Amazon Bedrock's Converse API (`POST /model/<modelId>/converse-stream`), through the AWS SDK: it signs
 * each request with SigV4 from the credentials given here (the request's `apiKey` is not used) and
 * decodes the AWS event-stream answer. One client per endpoint; the SDK never retries (`maxAttempts: 1`:
 * a retry is a second bill, and the router alone decides, before the first token).
 *
 * Transport: the SDK's default for this client, HTTP/2, with one connection per ConverseStream call (the
 * SDK isolates event streams in their own session), so no call is ever written to a pooled connection the
 * server is closing. Every failure is a ProviderError whose message never carries the credentials.
 */
export class BedrockProvider implements ModelProvider {
  private readonly client: BedrockRuntimeClient;
  /** What must never appear in a failure's message. */
  private readonly secrets: string[];
  /** The calls still running, aborted by close(): the SDK's destroy() leaves event-stream sessions open. */
  private readonly running = new Set<AbortController>();

  constructor(
    readonly name: string,
    settings: BedrockSettings,
    transport: TransportSettings,
  ) {
    this.client = new BedrockRuntimeClient(
      bedrockClientConfig(settings, transport),
    );
    const { accessKeyId, secretAccessKey, sessionToken } = settings.credentials;
    this.secrets = [secretAccessKey, sessionToken, accessKeyId].filter(
      (secret): secret is string => Boolean(secret),
    );
  }

  /** Ends the calls still running and closes the client's connections. */
  close(): Promise<void> {
    for (const call of this.running) call.abort();
    this.client.destroy();
    return Promise.resolve();
  }

  /** One ConverseStream call; stopping early (or aborting the signal) closes its HTTP/2 stream. */
  async *stream(request: GenerationRequest): AsyncIterable<GenerationEvent> {
    const abort = new AbortController();
    const outer = request.signal;
    const forward = () => abort.abort();
    if (outer?.aborted) abort.abort();
    else outer?.addEventListener('abort', forward, { once: true });
    this.running.add(abort);
    let complete = false;
    try {
      const events = await this.open(request, abort.signal);
      const decoder = new ConverseStreamDecoder();
      const out: GenerationEvent[] = [];
      try {
        for await (const event of events) {
          decoder.event(event, out);
          while (out.length > 0) yield out.shift() as GenerationEvent;
        }
        decoder.end(out);
      } catch (error) {
        throw this.failure(error, abort.signal, 'stream');
      }
      yield* out;
      complete = true;
    } finally {
      outer?.removeEventListener('abort', forward);
      this.running.delete(abort);
      if (!complete) abort.abort();
    }
  }

  /** Sends the call; the SDK resolves once the first event has arrived. */
  private async open(
    request: GenerationRequest,
    signal: AbortSignal,
  ): Promise<AsyncIterable<ConverseStreamOutput>> {
    let stream: AsyncIterable<ConverseStreamOutput> | undefined;
    try {
      ({ stream } = await this.client.send(
        new ConverseStreamCommand(converseStreamInput(request)),
        { abortSignal: signal },
      ));
    } catch (error) {
      throw this.failure(error, signal, 'send');
    }
    if (!stream)
      throw new ProviderError(this.name, 'the answer has no event stream');
    return stream;
  }

  private failure(
    error: unknown,
    signal: AbortSignal,
    phase: FailurePhase,
  ): ProviderError {
    return bedrockFailure(this.name, error, {
      aborted: signal.aborted,
      phase,
      secrets: this.secrets,
    });
  }
}

/**
 * The client's configuration, from the catalog's settings: the keys given here always sign (no AWS
 * profile, environment variable or bearer token replaces them) and the SDK makes exactly one attempt.
 */
export function bedrockClientConfig(
  settings: BedrockSettings,
  transport: TransportSettings,
): BedrockRuntimeClientConfig {
  const requestHandler = {
    // Idle limits of the stream and of its session: a backstop behind the chat's silence limit (the
    // AbortSignal), as undici's timeouts are for the SSE adapters.
    requestTimeout: transport.responseTimeoutMs,
    sessionTimeout: transport.responseTimeoutMs,
    // The client's own default, lost when the handler's options are given.
    disableConcurrentStreams: true,
    // NodeHttp2Handler has no connect timeout of its own.
    nodeHttp2ConnectOptions: {
      createConnection: connectWithin(transport.connectTimeoutMs),
    },
  } satisfies NodeHttp2HandlerOptions;
  return {
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    credentials: { ...settings.credentials },
    maxAttempts: 1,
    // Standard mode: `adaptive` would also delay calls on the client's side after a throttling answer.
    retryMode: 'standard',
    // With AWS_BEARER_TOKEN_BEDROCK in the environment the SDK would prefer that token to these keys.
    authSchemePreference: ['sigv4'],
    requestHandler,
  };
}

/**
 * The socket for an HTTP/2 session, as Node's http2.connect opens it (TLS with ALPN `h2` for `https:`,
 * plain TCP for `http:`, the h2c of a loopback fake), destroyed when it is not connected in time.
 */
export function connectWithin(
  timeoutMs: number,
): (authority: URL, options: SessionOptions) => Duplex {
  return (authority, options) => {
    const host = authority.hostname.replace(/^\[(.*)\]$/, '$1');
    const secure = authority.protocol !== 'http:';
    const port = Number(authority.port) || (secure ? 443 : 80);
    const socket = secure
      ? tlsConnect({
          ...options,
          host,
          port,
          servername: isIP(host) ? undefined : host,
          ALPNProtocols: ['h2'],
        })
      : netConnect({ host, port });
    const timer = setTimeout(
      () =>
        socket.destroy(
          Object.assign(new Error(`connect timed out after ${timeoutMs} ms`), {
            code: 'ETIMEDOUT',
          }),
        ),
      timeoutMs,
    );
    socket.once(secure ? 'secureConnect' : 'connect', () =>
      clearTimeout(timer),
    );
    socket.once('close', () => clearTimeout(timer));
    return socket;
  };
}

// ---- the request -----------------------------------------------------------------------------------

/** Stands for a tool's empty result: Converse refuses an empty text block, there too. */
export const EMPTY_TOOL_RESULT = '(empty)';

type Document = NonNullable<ToolUseBlock['input']>;
type Turn = { role: 'user' | 'assistant'; content: ContentBlock[] };

/** The ConverseStream input of a request. */
export function converseStreamInput(
  request: GenerationRequest,
): ConverseStreamCommandInput {
  const tools = request.tools ?? [];
  const { system, messages } = toConversePrompt(request.messages, {
    cacheablePrefix: supportsPromptCaching(request.upstreamModel)
      ? (request.cacheablePrefix ?? 0)
      : 0,
    toolsOffered: tools.length > 0,
  });
  return {
    modelId: request.upstreamModel,
    messages,
    ...(system.length > 0 ? { system } : {}),
    inferenceConfig: { maxTokens: request.maxOutputTokens },
    ...(tools.length > 0 ? { toolConfig: { tools: tools.map(toolOf) } } : {}),
  };
}

/**
 * The models Bedrock caches prompts for (its prompt-caching documentation): Claude 3.5 Haiku, 3.7 Sonnet
 * and the Claude 4 family, Nova Micro, Lite and Premier. Older Claude models (3 Haiku, 3 Sonnet, 3 Opus,
 * 3.5 Sonnet) answer a `cachePoint` with a 400, which would fail every turn with history: none is sent to
 * a model not listed here.
 */
const PROMPT_CACHING_MODELS =
  /(anthropic\.claude-(3-5-haiku|3-7-sonnet|sonnet-4|opus-4|haiku-4)|amazon\.nova-(micro|lite|premier))/;

/**
 * Whether the model takes cache points, read from the model id, which names the model also in a
 * cross-region inference profile (`us.anthropic.claude-...`) and in its ARN; an application inference
 * profile's ARN does not, so it is sent without cache points.
 */
export function supportsPromptCaching(modelId: string): boolean {
  return PROMPT_CACHING_MODELS.test(modelId);
}

/**
 * The service's messages in the shape Converse requires, by the rules of the Anthropic adapter
 * (toAnthropicPrompt), as Converse has the same constraints:
 * - every system message goes to `system` as one text block, joined by a blank line (none: no `system`);
 * - messages without visible text are left out (Converse refuses blank text blocks);
 * - consecutive messages of one role become one turn (roles must alternate); a tool's result goes back
 *   in a user turn;
 * - a first turn by the assistant gets LEADING_USER_PLACEHOLDER in front of it;
 * - a final assistant turn (a prefill) loses its trailing whitespace.
 * Converse refuses `toolUse` and `toolResult` blocks in a request without `toolConfig`, so when no tool
 * is offered the history's tool calls and results are written as text.
 * With a `cacheablePrefix` (0 for models without prompt caching), a cache point follows the system text
 * when every system message lies in the prefix, and the last message of the prefix: each one marks the
 * end of a prefix Bedrock may cache (a shorter prefix than the model's minimum is simply not cached).
 */
export function toConversePrompt(
  messages: readonly ChatMessage[],
  options: { cacheablePrefix: number; toolsOffered: boolean },
): { system: SystemContentBlock[]; messages: Message[] } {
  const systemTexts: string[] = [];
  let systemInPrefix = true;
  const turns: Turn[] = [];
  let prefixEnd: { turn: Turn; at: number } | undefined;
  for (const [index, message] of messages.entries()) {
    const inPrefix = index < options.cacheablePrefix;
    if (message.role === 'system') {
      if (!message.content.trim()) continue;
      systemTexts.push(message.content);
      if (!inPrefix) systemInPrefix = false;
      continue;
    }
    const blocks = blocksOf(message, options.toolsOffered);
    if (blocks.length === 0) continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    let turn = turns.at(-1);
    if (turn?.role !== role) {
      turn = { role, content: [] };
      turns.push(turn);
    }
    turn.content.push(...blocks);
    if (inPrefix) prefixEnd = { turn, at: turn.content.length };
  }
  if (turns[0]?.role === 'assistant')
    turns.unshift({
      role: 'user',
      content: [{ text: LEADING_USER_PLACEHOLDER }],
    });
  trimFinalAssistantText(turns);
  // Inserted last: the final assistant text is trimmed where it is, before a cache point follows it.
  if (prefixEnd) prefixEnd.turn.content.splice(prefixEnd.at, 0, cachePoint());
  const cacheSystem = options.cacheablePrefix > 0 && systemInPrefix;
  return { system: systemBlocks(systemTexts, cacheSystem), messages: turns };
}

/** A final assistant turn is a prefill the model continues: Converse refuses trailing whitespace there. */
function trimFinalAssistantText(turns: Turn[]): void {
  const final = turns.at(-1);
  const block = final?.content.at(-1);
  if (final?.role === 'assistant' && block?.text !== undefined)
    final.content[final.content.length - 1] = { text: block.text.trimEnd() };
}

function systemBlocks(texts: string[], cached: boolean): SystemContentBlock[] {
  if (texts.length === 0) return [];
  const text = texts.join('\n\n');
  return cached ? [{ text }, cachePoint()] : [{ text }];
}

function cachePoint(): { cachePoint: { type: 'default' } } {
  return { cachePoint: { type: 'default' } };
}

/** A message's blocks: its visible text, then its tool calls; or a tool's result. */
function blocksOf(message: ChatMessage, toolsOffered: boolean): ContentBlock[] {
  if (message.role === 'tool') {
    const toolUseId = message.toolCallId ?? '';
    if (!toolsOffered)
      return [
        { text: `(result of tool call ${toolUseId}) ${message.content}` },
      ];
    const text = message.content.trim() ? message.content : EMPTY_TOOL_RESULT;
    return [{ toolResult: { toolUseId, content: [{ text }] } }];
  }
  const blocks: ContentBlock[] = message.content.trim()
    ? [{ text: message.content }]
    : [];
  for (const call of message.toolCalls ?? [])
    blocks.push(
      toolsOffered
        ? {
            toolUse: {
              toolUseId: call.id,
              name: call.name,
              input: parseArguments(call.arguments),
            },
          }
        : { text: `(tool call ${call.name} ${call.arguments || '{}'})` },
    );
  return blocks;
}

/** The arguments' JSON text as an object (`{}` when empty, not JSON or not an object: Converse needs an object). */
function parseArguments(text: string): Document {
  try {
    const value: unknown = text.trim() ? JSON.parse(text) : {};
    return isRecord(value) ? (value as Document) : {};
  } catch {
    return {};
  }
}

function toolOf(tool: ToolSpec): Tool {
  return {
    toolSpec: {
      name: tool.name,
      // Converse refuses an empty description (its minimum length is 1).
      ...(tool.description ? { description: tool.description } : {}),
      inputSchema: { json: tool.parameters as Document },
    },
  };
}

// ---- the answer ------------------------------------------------------------------------------------

/** The exception members of a ConverseStream event, as they may arrive in the stream. */
const STREAM_EXCEPTIONS = [
  'internalServerException',
  'modelStreamErrorException',
  'throttlingException',
  'validationException',
  'serviceUnavailableException',
] as const;

/**
 * ConverseStream events → generation events: `contentBlockDelta` text is text; a tool call's id and name
 * come in `contentBlockStart`, its arguments in pieces of JSON in the deltas, and it is complete at
 * `contentBlockStop`. `messageStop` completes the answer, but `metadata` (the usage) follows it, so the
 * usage is reported at the end of the stream. An exception event fails the answer, and so does a stream
 * that ends before `messageStop`. Other events (messageStart, reasoning deltas) carry nothing used here.
 */
export class ConverseStreamDecoder {
  private readonly toolUses = new Map<number, ToolCall>();
  private stopped = false;
  private usage: TokenUsage | undefined;

  /** One event: appends what it yields to `out`; throws UpstreamError for an exception. */
  event(event: ConverseStreamOutput, out: GenerationEvent[]): void {
    if (event.contentBlockStart) {
      const toolUse = event.contentBlockStart.start?.toolUse;
      if (toolUse)
        this.toolUses.set(event.contentBlockStart.contentBlockIndex ?? 0, {
          id: toolUse.toolUseId ?? '',
          name: toolUse.name ?? '',
          arguments: '',
        });
    } else if (event.contentBlockDelta) {
      this.delta(event.contentBlockDelta, out);
    } else if (event.contentBlockStop) {
      this.toolCallEnd(event.contentBlockStop.contentBlockIndex ?? 0, out);
    } else if (event.messageStop) {
      this.stopped = true;
    } else if (event.metadata) {
      this.usage = event.metadata.usage;
    } else {
      const exception = exceptionOf(event);
      if (exception) throw new UpstreamError(exception);
    }
  }

  /** The stream ended: appends the usage, or throws if the answer never completed. */
  end(out: GenerationEvent[]): void {
    if (!this.stopped)
      throw new UpstreamError('stream ended before messageStop');
    const usage = usageEvent(this.usage);
    if (usage) out.push(usage);
  }

  private delta(
    event: NonNullable<ConverseStreamOutput['contentBlockDelta']>,
    out: GenerationEvent[],
  ): void {
    const delta = event.delta;
    if (typeof delta?.text === 'string' && delta.text)
      out.push({ type: 'text', text: delta.text });
    const toolUse = this.toolUses.get(event.contentBlockIndex ?? 0);
    if (toolUse && typeof delta?.toolUse?.input === 'string')
      toolUse.arguments += delta.toolUse.input;
  }

  private toolCallEnd(index: number, out: GenerationEvent[]): void {
    const toolUse = this.toolUses.get(index);
    if (!toolUse) return;
    this.toolUses.delete(index);
    if (!toolUse.id || !toolUse.name)
      throw new UpstreamError('a toolUse block came without its id or name');
    out.push({
      type: 'tool_call',
      call: { ...toolUse, arguments: toolUse.arguments || '{}' },
    });
  }
}

/**
 * The usage event of a `metadata.usage`: the input tokens include those read from and written to the
 * prompt cache (Bedrock counts them apart, as Anthropic does); the reads are also `cachedInputTokens`.
 */
function usageEvent(
  usage: TokenUsage | undefined,
): GenerationEvent | undefined {
  if (
    typeof usage?.inputTokens !== 'number' ||
    typeof usage.outputTokens !== 'number'
  )
    return undefined;
  const read = usage.cacheReadInputTokens;
  return {
    type: 'usage',
    inputTokens:
      usage.inputTokens + (read ?? 0) + (usage.cacheWriteInputTokens ?? 0),
    outputTokens: usage.outputTokens,
    ...(typeof read === 'number' ? { cachedInputTokens: read } : {}),
  };
}

/** `<exception>: <message>` of an exception event, undefined for any other event. */
function exceptionOf(event: ConverseStreamOutput): string | undefined {
  for (const member of STREAM_EXCEPTIONS) {
    const exception = event[member];
    if (exception) return `${member}: ${exception.message || 'no message'}`;
  }
  return undefined;
}

// ---- failures --------------------------------------------------------------------------------------

/** Where the call failed: sending it (until the first event), or reading the stream. */
export type FailurePhase = 'send' | 'stream';

/**
 * A failure as a ProviderError, told apart by what the SDK threw:
 * - the caller aborted: `aborted`, whatever the SDK made of it;
 * - an error status (the SDK's exception carries it in `$metadata`): `http`, with the Retry-After;
 * - an exception in a 2xx answer (the SDK throws one met at the first event from `send`, with the
 *   answer's status), a malformed or cut stream, anything while the stream is read: `stream`;
 * - otherwise, no answer at all (refused, reset, timed out, DNS): `connection`.
 * The message is the first line of what the SDK or Bedrock said, with the credentials replaced.
 */
export function bedrockFailure(
  provider: string,
  error: unknown,
  context: {
    aborted: boolean;
    phase: FailurePhase;
    secrets: readonly string[];
  },
): ProviderError {
  if (error instanceof ProviderError) return error;
  if (context.aborted)
    return new ProviderError(provider, 'request aborted', { kind: 'aborted' });
  const reason = (text: string) => shortReason(text, context.secrets);
  if (error instanceof UpstreamError)
    return new ProviderError(provider, reason(error.message));
  const status = inStreamStatusOf(error) ?? httpStatusOf(error);
  if (status !== undefined && (status < 200 || status > 299))
    return new ProviderError(
      provider,
      reason(`HTTP ${status}: ${describeError(error)}`),
      {
        kind: 'http',
        status,
        retryAfterMs: retryAfterMs(retryAfterOf(error)),
      },
    );
  const answered =
    status !== undefined ||
    isServiceException(error) ||
    context.phase === 'stream';
  return new ProviderError(provider, reason(describeError(error)), {
    kind: answered ? 'stream' : 'connection',
  });
}

/**
 * The status an exception stands for when it came in the event stream of a 200 (the SDK throws the first
 * event's exception from `send()`): a throttling there is a 429 all the same, so the router rests the key.
 */
const IN_STREAM_STATUS: Record<string, number> = {
  ThrottlingException: 429,
  ServiceUnavailableException: 503,
  InternalServerException: 500,
  ModelNotReadyException: 503,
};

function inStreamStatusOf(error: unknown): number | undefined {
  if (!isRecord(error) || typeof error.name !== 'string') return undefined;
  const status = httpStatusOf(error);
  if (status !== undefined && (status < 200 || status > 299)) return undefined;
  return IN_STREAM_STATUS[error.name];
}

/** The HTTP status of the answer an SDK error came from (`$metadata.httpStatusCode`). */
function httpStatusOf(error: unknown): number | undefined {
  if (!isRecord(error) || !isRecord(error.$metadata)) return undefined;
  const status = error.$metadata.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

/** The answer's `retry-after` header, when the SDK kept the answer (`$response`, not enumerable). */
function retryAfterOf(error: unknown): string | undefined {
  if (!isRecord(error)) return undefined;
  const response = error.$response;
  if (!isRecord(response) || !isRecord(response.headers)) return undefined;
  const value = response.headers['retry-after'];
  return typeof value === 'string' ? value : undefined;
}

/** An exception the SDK made from Bedrock's words (its `$fault` says whose fault it is). */
function isServiceException(error: unknown): boolean {
  return (
    isRecord(error) && (error.$fault === 'client' || error.$fault === 'server')
  );
}

/**
 * An error in a line: `<name>: <message>` (Bedrock's exceptions, the SDK's TimeoutError), with the code
 * of a Node error and of its cause (HTTP/2 reports a refused connection as a cancelled stream caused by
 * it). Read by shape, not instanceof: errors may come from another realm (Jest's sandbox).
 */
function describeError(error: unknown): string {
  if (!isRecord(error)) return 'request failed';
  const message = typeof error.message === 'string' ? error.message : '';
  const name = typeof error.name === 'string' ? error.name : '';
  let text =
    name && name !== 'Error' && !message.startsWith(name)
      ? `${name}: ${message || 'no message'}`
      : message || name || 'request failed';
  const cause = isRecord(error.cause) ? error.cause.code : undefined;
  for (const code of [error.code, cause])
    if (typeof code === 'string' && !text.includes(code)) text += ` (${code})`;
  return text;
}
