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
  /** The provider's own model name (the catalog's `upstreamModel`). */
  upstreamModel: string;
  messages: ChatMessage[];
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
  | { type: 'usage'; inputTokens: number; outputTokens: number };

/** Raised when the upstream model fails (connection, HTTP error, broken stream) or times out. */
export class ProviderError extends Error {
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'ProviderError';
  }
}

/** Receives a generation's events as they arrive, synchronously. */
export type GenerationSink = (event: GenerationEvent) => void;

/** One kind of upstream (the catalog's `provider`): the built-in echo, OpenAI-compatible, Anthropic. */
export interface ModelProvider {
  readonly name: string;
  /** False when its credentials are missing: chat answers 503 provider_not_configured, nothing billed. */
  isConfigured(): boolean;
  /** The events of one call; stopping early (or aborting the signal) ends the upstream call. */
  stream(request: GenerationRequest): AsyncIterable<GenerationEvent>;
  /**
   * The same events pushed into `sink` as they arrive, without an async step per event (the chat's hot
   * path uses it when a provider has it). Resolves when the answer is complete; rejects with a ProviderError.
   */
  pump?(request: GenerationRequest, sink: GenerationSink): Promise<void>;
}
