/** A call of a tool the model made: the id it gave it, the tool's name on the wire, the JSON text of its arguments. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * A message as the model receives it. An assistant message may carry the tool calls it made (`toolCalls`);
 * a `tool` message is the result of one of them (`toolCallId`).
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

/** A tool offered to the model: its name on the wire, what it does, the JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface GenerationRequest {
  /** The provider's own model name (the catalog's `upstreamModel`; Azure: the deployment). */
  upstreamModel: string;
  messages: ChatMessage[];
  /**
   * The credential the router chose from the endpoint's key pool for this call (adapters hold no key of
   * their own; absent: the endpoint needs none, as a local Ollama). docs/adr/0063-providers-and-routing.md
   */
  apiKey?: string;
  /**
   * How many of the leading `messages` are the stable prefix a provider may cache (the Skill's
   * instruction, the files section, the history before the new turn); 0 or absent: nothing is marked.
   */
  cacheablePrefix?: number;
  maxOutputTokens: number;
  /** The tools the model may call; none: a request exactly as without tools. */
  tools?: ToolSpec[];
  signal?: AbortSignal;
}

/**
 * What a provider streams: text as it is produced, each tool call once its arguments are complete (at the
 * end of the answer), then (once) the token usage it reports.
 */
export type GenerationEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | {
      type: 'usage';
      /** Every input token, those read from the provider's prompt cache included. */
      inputTokens: number;
      outputTokens: number;
      /** Of `inputTokens`, those read from the prompt cache (priced apart); absent: none reported. */
      cachedInputTokens?: number;
    };

/**
 * What kind of failure it was, for the router's choice between retrying, cooling a key down and giving up:
 * `connection` (no response: refused, reset, TLS, DNS), `http` (an error status, with its `Retry-After`),
 * `stream` (an error event or a cut or malformed stream after a 2xx), `aborted` (the caller aborted),
 * `refused` (the provider's content filter or safety system refused the prompt or the answer: asking
 * again, or another provider, is not the answer to that).
 */
export interface ProviderFailure {
  kind: 'connection' | 'http' | 'stream' | 'aborted' | 'refused';
  /** The HTTP status, for `http` (Bedrock: the status of its exception). */
  status?: number;
  /** The upstream's `Retry-After` (seconds or an HTTP date) in milliseconds, when it sent one. */
  retryAfterMs?: number;
  /** The upstream said the key itself is invalid, whatever its status (Google answers 400 API_KEY_INVALID). */
  keyRejected?: boolean;
}

/** Raised when the upstream model fails (connection, HTTP error, broken stream) or times out. */
export class ProviderError extends Error {
  constructor(
    readonly provider: string,
    message: string,
    readonly failure: ProviderFailure = { kind: 'stream' },
  ) {
    super(`${provider}: ${message}`);
    this.name = 'ProviderError';
  }
}

/** Receives a generation's events as they arrive, synchronously. */
export type GenerationSink = (event: GenerationEvent) => void;

/**
 * One endpoint of the catalog (docs/adr/0063-providers-and-routing.md), speaking its kind's wire format:
 * the built-in echo, OpenAI-compatible, Anthropic, Gemini, Azure OpenAI, Bedrock. Keys come with each
 * request (`apiKey`), chosen by the router; an adapter never retries (the router decides).
 */
export interface ModelProvider {
  /** The endpoint's id in the catalog (`openai`, `ollama`, ...). */
  readonly name: string;
  /** The events of one call; stopping early (or aborting the signal) ends the upstream call. */
  stream(request: GenerationRequest): AsyncIterable<GenerationEvent>;
  /**
   * The same events pushed into `sink` as they arrive, without an async step per event (the chat's hot
   * path uses it when a provider has it). Resolves when the answer is complete; rejects with a ProviderError.
   */
  pump?(request: GenerationRequest, sink: GenerationSink): Promise<void>;
}
