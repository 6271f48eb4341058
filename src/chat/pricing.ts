import { ChatMessage } from '../models/providers/model-provider';

/** A model's price as synced from the catalog. */
export interface ModelPrice {
  creditsPerRequest: number;
  creditsPer1kInput: number;
  creditsPer1kOutput: number;
  /** Input read from the provider's prompt cache; null: priced as other input. */
  creditsPer1kCachedInput: number | null;
  maxOutputTokens: number;
}

/** Chat templates add a few tokens per message (role markers, separators) on top of the content. */
const TOKENS_PER_MESSAGE = 4;
/** Conservative: English averages ~4 bytes per token, code ~3, CJK ~3 (one character). */
export const BYTES_PER_TOKEN = 3;

/** An upper-leaning estimate of the input tokens of a prompt, before the provider reports the real count. */
export function estimateInputTokens(messages: ChatMessage[]): number {
  const bytes = messages.reduce(
    (sum, message) =>
      sum +
      Buffer.byteLength(message.content, 'utf8') +
      (message.toolCalls ?? []).reduce(
        (calls, call) =>
          calls +
          Buffer.byteLength(call.name, 'utf8') +
          Buffer.byteLength(call.arguments, 'utf8'),
        0,
      ),
    0,
  );
  return (
    Math.ceil(bytes / BYTES_PER_TOKEN) + TOKENS_PER_MESSAGE * messages.length
  );
}

/**
 * Credits for a number of tokens: the per-request price plus each side rounded up to a whole credit. Of
 * the input, `cachedInputTokens` (read from the provider's prompt cache) take the cached price.
 */
export function creditsFor(
  price: ModelPrice,
  inputTokens: number,
  outputTokens: number,
  cachedInputTokens = 0,
): number {
  const cached = Math.min(Math.max(0, cachedInputTokens), inputTokens);
  const cachedPrice = price.creditsPer1kCachedInput ?? price.creditsPer1kInput;
  return (
    price.creditsPerRequest +
    Math.ceil(
      ((inputTokens - cached) * price.creditsPer1kInput +
        cached * cachedPrice) /
        1000,
    ) +
    Math.ceil((outputTokens * price.creditsPer1kOutput) / 1000)
  );
}

/** What is held before the provider is called: the estimated input and the most output the model may write. */
export function reservationFor(
  price: ModelPrice,
  estimatedInputTokens: number,
): number {
  return creditsFor(price, estimatedInputTokens, price.maxOutputTokens);
}

/** What is finally charged: the actual cost, never above what was reserved. */
export function settledCredits(
  price: ModelPrice,
  reserved: number,
  inputTokens: number,
  outputTokens: number,
  cachedInputTokens = 0,
): number {
  return Math.min(
    reserved,
    creditsFor(price, inputTokens, outputTokens, cachedInputTokens),
  );
}
