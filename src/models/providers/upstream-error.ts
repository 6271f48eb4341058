/**
 * What an upstream reported as a failure (an HTTP error, an error event, a malformed or cut stream), in
 * the upstream's own words; the adapter turns it into a ProviderError. Never carries the request.
 */
export class UpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamError';
  }
}

const MAX_REASON_CHARS = 300;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A failure reason fit for a log line: its first line, at most 300 characters, with the secrets (an API
 * key, a pool's keys, signing credentials) replaced should an upstream ever echo one. The longest goes
 * first, so a secret holding another is replaced whole, and all before cutting, so no prefix survives.
 */
export function shortReason(
  text: string,
  secrets?: string | readonly (string | undefined)[],
): string {
  const end = text.search(/[\r\n]/);
  let line = end === -1 ? text : text.slice(0, end);
  const replaced = (typeof secrets === 'string' ? [secrets] : (secrets ?? []))
    .filter((secret): secret is string => Boolean(secret))
    .sort((a, b) => b.length - a.length);
  // One pass: a secret found inside an earlier replacement's marker is never replaced again.
  if (replaced.some((secret) => line.includes(secret)))
    line = line.replace(
      new RegExp(replaced.map(escapeRegExp).join('|'), 'g'),
      '[redacted]',
    );
  return line.trim().slice(0, MAX_REASON_CHARS);
}

/**
 * The provider refused the prompt or stopped its answer by its content filter or safety system (Azure's
 * `content_filter`, Gemini's blocked prompt or SAFETY finish): not retried, not sent to another provider.
 */
export class UpstreamRefusal extends UpstreamError {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamRefusal';
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The message of an error payload in the shapes the supported servers use: `{error: {message, type}}`
 * (OpenAI, llama.cpp, OpenRouter, Anthropic's `{type: 'error', error: {...}}`), `{error: "..."}` (Ollama),
 * `{message: "..."}` (vLLM), `{detail: "..."}` (FastAPI servers). Only string fields are taken: a
 * validation `detail` array, for instance, may quote the request's messages.
 */
export function errorMessageOf(payload: unknown): string | undefined {
  if (!isRecord(payload)) return undefined;
  const error = payload.error;
  if (typeof error === 'string' && error) return error;
  if (isRecord(error)) {
    if (typeof error.message === 'string' && error.message)
      return error.message;
    if (typeof error.type === 'string' && error.type) return error.type;
    if (typeof error.code === 'string' || typeof error.code === 'number')
      return String(error.code);
  }
  if (typeof payload.message === 'string' && payload.message)
    return payload.message;
  if (typeof payload.detail === 'string' && payload.detail)
    return payload.detail;
  return undefined;
}

/** Parses one event's JSON (once); a payload that is not a JSON object is a malformed stream. */
export function parseEventJson(data: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new UpstreamError('malformed stream event (not JSON)');
  }
  if (!isRecord(value))
    throw new UpstreamError('malformed stream event (not a JSON object)');
  return value;
}
