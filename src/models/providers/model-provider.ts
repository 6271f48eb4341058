/** A message as the model receives it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerationRequest {
  /** The provider's own model name (the catalog's `upstreamModel`). */
  upstreamModel: string;
  messages: ChatMessage[];
  maxOutputTokens: number;
  signal?: AbortSignal;
}

/** What a provider streams: text as it is produced, then (once) the token usage it reports. */
export type GenerationEvent =
  | { type: 'text'; text: string }
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
