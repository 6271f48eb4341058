// docs/adr/0026-model-providers.md
import { StringDecoder } from 'node:string_decoder';
import { createParser, EventSourceParser } from 'eventsource-parser';
import { Agent, Dispatcher } from 'undici';
import {
  GenerationEvent,
  GenerationRequest,
  GenerationSink,
  ModelProvider,
  ProviderError,
} from './model-provider';
import {
  errorMessageOf,
  isRecord,
  shortReason,
  UpstreamError,
  UpstreamRefusal,
} from './upstream-error';

/**
 * Turns one upstream's server-sent events into generation events. Pure (no I/O), one per response.
 * Both methods throw UpstreamError for what the upstream reports as a failure.
 */
export interface StreamDecoder {
  /** One SSE event (`event` is the SSE event name, if any): appends what it yields to `out`; true once the response is complete. */
  event(
    data: string,
    event: string | undefined,
    out: GenerationEvent[],
  ): boolean;
  /** The body ended before `event` answered true: appends the closing events, or throws if the answer is incomplete. */
  end(out: GenerationEvent[]): void;
}

/** One upstream call: the path (and query) under the base URL, the headers and the JSON body. */
export interface UpstreamCall {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface UpstreamSettings {
  baseUrl: string;
}

export interface TransportSettings {
  /** Longest wait for the TCP/TLS connection. */
  connectTimeoutMs: number;
  /**
   * undici's own headers and body (between two chunks) timeouts. Only a backstop: the caller enforces the
   * provider silence limit with the AbortSignal (src/chat/generation.ts), so this must be longer than that.
   */
  responseTimeoutMs: number;
}

/** Bytes of an error response read for its message; the rest is dropped. */
const MAX_ERROR_BODY = 16 * 1024;
/** After the final event, what is left of the body (the chunked terminator) is read in the background so the connection is reused. */
const MAX_DRAIN_BYTES = 64 * 1024;
const DRAIN_TIMEOUT_MS = 5_000;

/**
 * An upstream that answers `POST <baseUrl><path>` with a server-sent event stream. One request per
 * generation over a dedicated keep-alive undici Agent (no retries here: the router decides, before the
 * first token only); the body is decoded with eventsource-parser and each event's JSON is parsed once by
 * the decoder. The request's AbortSignal goes to undici, so an abort closes the upstream connection at once.
 * Every failure (connection, HTTP status, error event, cut stream) is a ProviderError with a short
 * reason and its kind (status, Retry-After): never the request body, never the API key.
 */
export abstract class SseModelProvider implements ModelProvider {
  private readonly agent: Agent;
  private readonly origin: string;
  private readonly basePath: string;

  protected constructor(
    readonly name: string,
    upstream: UpstreamSettings,
    transport: TransportSettings,
  ) {
    const url = new URL(upstream.baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    // A plain Agent never retries (only undici's RetryAgent/retry interceptor would). Keep-alive keeps
    // undici's idle timeout (4 s, or the server's Keep-Alive hint less 1 s): short enough that a request
    // is not written to a socket the server is closing, which without retries would fail a generation.
    // One request per connection at a time (no pipelining), as many connections as concurrent streams.
    this.agent = new Agent({
      connectTimeout: transport.connectTimeoutMs,
      headersTimeout: transport.responseTimeoutMs,
      bodyTimeout: transport.responseTimeoutMs,
      pipelining: 1,
    });
  }

  /** Closes the connections, cutting upstream calls still running (called once the app no longer waits for them). */
  close(): Promise<void> {
    return this.agent.destroy();
  }

  /** The call for a request; async where a credential must be fetched first (an Entra token). */
  protected abstract call(
    request: GenerationRequest,
  ): UpstreamCall | Promise<UpstreamCall>;
  protected abstract decoder(): StreamDecoder;

  /** `pump`, read as an async iterable: stopping early aborts the upstream call. */
  async *stream(request: GenerationRequest): AsyncIterable<GenerationEvent> {
    const abort = new AbortController();
    const outer = request.signal;
    const forward = () => abort.abort();
    if (outer?.aborted) abort.abort();
    else outer?.addEventListener('abort', forward, { once: true });
    const queue: GenerationEvent[] = [];
    let wake: (() => void) | undefined;
    const state: { done: boolean; failure?: { error: unknown } } = {
      done: false,
    };
    void this.pump({ ...request, signal: abort.signal }, (event) => {
      queue.push(event);
      wake?.();
    })
      .catch((error: unknown) => {
        if (error !== undefined) state.failure = { error };
      })
      .finally(() => {
        state.done = true;
        wake?.();
      });
    try {
      for (;;) {
        while (queue.length > 0) yield queue.shift() as GenerationEvent;
        if (state.done) {
          if (state.failure) throw state.failure.error;
          return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      outer?.removeEventListener('abort', forward);
      if (!state.done) abort.abort();
    }
  }

  /**
   * One upstream call, its events pushed into `sink` as each chunk of the body is read. Complete: what is
   * left of the body (the chunked terminator) is read in the background so the connection is reused.
   * Failed or aborted: the body is destroyed, which closes the upstream connection.
   */
  async pump(request: GenerationRequest, sink: GenerationSink): Promise<void> {
    const { signal, apiKey } = request;
    let response: Dispatcher.ResponseData;
    try {
      const call = await this.call(request);
      response = await this.agent.request({
        origin: this.origin,
        path: this.basePath + call.path,
        method: 'POST',
        headers: call.headers,
        body: call.body,
        signal,
      });
    } catch (error) {
      throw this.failure(error, signal, apiKey, 'connection');
    }
    const { statusCode, body, headers } = response;
    if (statusCode < 200 || statusCode > 299) {
      const failure = await httpFailure(statusCode, body);
      throw new ProviderError(this.name, shortReason(failure.reason, apiKey), {
        kind: 'http',
        status: statusCode,
        retryAfterMs:
          retryAfterMsHeader(headers['retry-after-ms']) ??
          retryAfterMs(headers['retry-after']) ??
          failure.retryAfterMs,
        ...(failure.keyRejected ? { keyRejected: true } : {}),
      });
    }

    const out: GenerationEvent[] = [];
    const reader = new SseReader(this.decoder(), out);
    const flush = () => {
      for (let index = 0; index < out.length; index += 1) sink(out[index]);
      out.length = 0;
    };
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (error?: unknown) => {
        if (settled) return;
        settled = true;
        if (error === undefined) resolve();
        else {
          body.destroy();
          reject(this.failure(error, signal, apiKey, 'stream'));
        }
      };
      body.on('data', (chunk: Buffer) => {
        if (settled) return;
        try {
          const complete = reader.write(chunk);
          flush();
          if (complete) {
            drain(body);
            finish();
          }
        } catch (error) {
          finish(error);
        }
      });
      body.on('end', () => {
        if (settled) return;
        try {
          reader.end();
          flush();
          finish();
        } catch (error) {
          finish(error);
        }
      });
      body.on('error', (error: Error) => finish(error));
    });
  }

  /**
   * A failure as a ProviderError: the upstream's words (an error event, a malformed stream) are `stream`;
   * a transport error is `connection` before the response and `stream` in its body.
   */
  private failure(
    error: unknown,
    signal: AbortSignal | undefined,
    apiKey: string | undefined,
    transportKind: 'connection' | 'stream',
  ): ProviderError {
    if (error instanceof ProviderError) return error;
    if (error instanceof UpstreamRefusal)
      return new ProviderError(this.name, shortReason(error.message, apiKey), {
        kind: 'refused',
      });
    if (error instanceof UpstreamError)
      return new ProviderError(this.name, shortReason(error.message, apiKey));
    if (signal?.aborted)
      return new ProviderError(this.name, 'request aborted', {
        kind: 'aborted',
      });
    return new ProviderError(
      this.name,
      shortReason(describeTransportError(error), apiKey),
      { kind: transportKind },
    );
  }
}

/**
 * Response body bytes → generation events: UTF-8 decoding (a character split across chunks stays whole;
 * undici's body ignores setEncoding), SSE framing (eventsource-parser) and the upstream's decoder.
 */
export class SseReader {
  private readonly utf8 = new StringDecoder('utf8');
  private readonly parser: EventSourceParser;
  private complete = false;

  constructor(
    private readonly decoder: StreamDecoder,
    private readonly out: GenerationEvent[],
  ) {
    this.parser = createParser({
      onEvent: (message) => {
        if (!this.complete)
          this.complete = decoder.event(message.data, message.event, out);
      },
    });
  }

  /** Feeds one chunk; true once the decoder has seen the response complete (the rest of the body is not read). */
  write(chunk: Buffer): boolean {
    this.parser.feed(this.utf8.write(chunk));
    return this.complete;
  }

  /**
   * The body ended. An event without its closing blank line is dropped (SSE rules), so a cut stream is
   * never taken for a complete one; the decoder then appends the closing events or throws.
   */
  end(): void {
    this.parser.feed(this.utf8.end());
    if (!this.complete) this.decoder.end(this.out);
  }
}

/** Longest Retry-After taken from an upstream (a longer one is cut to this). */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * A `Retry-After` header (delay-seconds or an HTTP date) in milliseconds, at most ten minutes; undefined
 * when absent or unreadable. Also read by the adapters that are not SSE (Bedrock).
 */
export function retryAfterMs(
  value: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  const ms = /^\d+(\.\d+)?$/.test(text)
    ? Number(text) * 1000
    : Date.parse(text) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(0, Math.round(ms)), MAX_RETRY_AFTER_MS);
}

/** Azure's `retry-after-ms`: whole milliseconds (at most the Retry-After cap). */
function retryAfterMsHeader(
  value: string | string[] | undefined,
): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text || !/^\d+$/.test(text)) return undefined;
  return Math.min(Number(text), MAX_RETRY_AFTER_MS);
}

/**
 * Google's wait before a retry, in the error body rather than a header: `error.details[]` holding a
 * `google.rpc.RetryInfo` with `retryDelay: "37s"`.
 */
function retryDelayOf(payload: unknown): number | undefined {
  if (!isRecord(payload) || !isRecord(payload.error)) return undefined;
  const details = payload.error.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details as unknown[]) {
    if (!isRecord(detail) || typeof detail.retryDelay !== 'string') continue;
    const seconds = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay.trim());
    if (seconds)
      return Math.min(
        Math.round(Number(seconds[1]) * 1000),
        MAX_RETRY_AFTER_MS,
      );
  }
  return undefined;
}

/**
 * Google names a bad key in the error's details (`reason: API_KEY_INVALID`, or `API_KEY_EXPIRED`), with a
 * 400 rather than a 401: the key must rest like a refused one.
 */
function keyRejectedIn(payload: unknown): boolean {
  if (!isRecord(payload) || !isRecord(payload.error)) return false;
  const details = payload.error.details;
  if (!Array.isArray(details)) return false;
  return (details as unknown[]).some(
    (detail) =>
      isRecord(detail) &&
      (detail.reason === 'API_KEY_INVALID' ||
        detail.reason === 'API_KEY_EXPIRED'),
  );
}

/**
 * `HTTP <status>: <the upstream's error message>`, from a JSON error body when there is one, the wait
 * before a retry when the body says it (Google), and whether the body says the key is invalid.
 */
async function httpFailure(
  statusCode: number,
  body: Dispatcher.ResponseData['body'],
): Promise<{ reason: string; retryAfterMs?: number; keyRejected?: boolean }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      bytes += (chunk as Buffer).length;
      if (bytes > MAX_ERROR_BODY) break;
    }
  } catch {
    // The status alone says enough.
  }
  let message: string | undefined;
  let retryAfter: number | undefined;
  let keyRejected = false;
  try {
    const payload: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    message = errorMessageOf(payload);
    retryAfter = retryDelayOf(payload);
    keyRejected = keyRejectedIn(payload);
  } catch {
    // Not JSON (a proxy's HTML page, say): not quoted.
  }
  return {
    reason: message ? `HTTP ${statusCode}: ${message}` : `HTTP ${statusCode}`,
    ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
    ...(keyRejected ? { keyRejected } : {}),
  };
}

/**
 * A transport failure in a line: undici's and Node's own messages (`other side closed`, `connect
 * ECONNREFUSED 10.0.0.1:443`, `Connect Timeout Error`) with their code. Read by shape, not instanceof:
 * Node's errors may come from another realm (Jest's sandbox).
 */
function describeTransportError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'connection failed';
  const { message, name, code, errors } = error as {
    message?: unknown;
    name?: unknown;
    code?: unknown;
    errors?: unknown;
  };
  let text = typeof message === 'string' && message ? message : '';
  // Happy Eyeballs (autoSelectFamily) reports an AggregateError without a message of its own.
  if (!text && Array.isArray(errors) && errors.length > 0)
    text = describeTransportError(errors[0]);
  if (!text)
    text = typeof name === 'string' && name ? name : 'connection failed';
  return typeof code === 'string' && !text.includes(code)
    ? `${text} (${code})`
    : text;
}

/** Reads what is left of a complete response in the background (bounded), so its connection is reused. */
function drain(body: Dispatcher.ResponseData['body']): void {
  const timer = setTimeout(() => body.destroy(), DRAIN_TIMEOUT_MS);
  timer.unref();
  let bytes = 0;
  body.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MAX_DRAIN_BYTES) body.destroy();
  });
  body.once('close', () => clearTimeout(timer));
  body.once('error', () => clearTimeout(timer));
}
