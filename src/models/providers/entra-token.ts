import { ProviderError } from './model-provider';
import { errorMessageOf, isRecord, shortReason } from './upstream-error';
import { retryAfterMs } from './sse-provider';

/** A Microsoft Entra app registration allowed to call the Azure OpenAI resource (client credentials). */
export interface EntraSettings {
  /** `https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token` */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** `https://cognitiveservices.azure.com/.default` for Azure OpenAI. */
  scope: string;
}

/** The part of `fetch` the token call uses (the global fetch; tests inject their own). */
export type TokenFetch = (
  url: string,
  init: {
    method: 'POST';
    headers: Record<string, string>;
    body: string;
    signal: AbortSignal;
  },
) => Promise<{
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}>;

export interface EntraTokenOptions {
  /** The clock, in epoch milliseconds (tests move it). */
  now?: () => number;
  fetch?: TokenFetch;
  /** Longest wait for the token endpoint's answer. */
  timeoutMs?: number;
}

/** Entra answers within a second or two; a hung login endpoint must not hold every Azure call. */
const TOKEN_TIMEOUT_MS = 10_000;
/** A token is replaced this long before it expires, so no call goes out with one about to lapse. */
const REFRESH_MARGIN_MS = 5 * 60_000;

interface CachedToken {
  value: string;
  refreshAt: number;
}

/**
 * An Entra access token obtained by the OAuth 2.0 client-credentials grant, cached and shared: callers
 * arriving while it is being fetched wait for that one request, and it is refetched 5 minutes before it
 * expires (at half its lifetime when it lives under 10 minutes, so a short-lived token is still reused).
 * A failed request is a ProviderError (`http` with the token endpoint's status, or `connection`) that
 * never carries the client secret; nothing is cached then, so the next call tries again.
 */
export class EntraTokenCache {
  private cached: CachedToken | undefined;
  private pending: Promise<string> | undefined;
  private readonly now: () => number;
  private readonly fetch: TokenFetch;
  private readonly timeoutMs: number;

  constructor(
    private readonly provider: string,
    private readonly settings: EntraSettings,
    options: EntraTokenOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.fetch = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? TOKEN_TIMEOUT_MS;
  }

  /**
   * A valid token. `signal` only ends this caller's wait (the base class then reports the call as
   * `aborted`): the shared request goes on for the others.
   */
  token(signal?: AbortSignal): Promise<string> {
    if (this.cached && this.now() < this.cached.refreshAt)
      return Promise.resolve(this.cached.value);
    this.pending ??= this.refresh().finally(() => (this.pending = undefined));
    return untilAborted(this.pending, signal);
  }

  /** Forgets the cached token (Azure refused it: revoked, or the role assignment changed). */
  invalidate(): void {
    this.cached = undefined;
  }

  private async refresh(): Promise<string> {
    const requestedAt = this.now();
    const { status, text, retryAfter } = await this.post();
    if (status < 200 || status > 299)
      throw new ProviderError(
        this.provider,
        this.reason(`HTTP ${status}${describeError(text)}`),
        { kind: 'http', status, retryAfterMs: retryAfterMs(retryAfter) },
      );
    const { value, lifetimeMs } = this.parse(text, status);
    this.cached = {
      value,
      refreshAt: requestedAt + lifetimeMs - margin(lifetimeMs),
    };
    return value;
  }

  /** The form POST; a transport failure or the timeout is a `connection` failure. */
  private async post(): Promise<{
    status: number;
    text: string;
    retryAfter: string | undefined;
  }> {
    const { tokenUrl, clientId, clientSecret, scope } = this.settings;
    try {
      const response = await this.fetch(tokenUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret,
          scope,
        }).toString(),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      return {
        status: response.status,
        text: await response.text(),
        retryAfter: response.headers.get('retry-after') ?? undefined,
      };
    } catch (error) {
      throw new ProviderError(
        this.provider,
        this.reason(transportReason(error, this.timeoutMs)),
        { kind: 'connection' },
      );
    }
  }

  /**
   * `{access_token, expires_in, token_type}`. Anything else (a token URL that answers a sign-in page, say)
   * is a failed request, `http` with the 2xx status: a configuration fault no retry mends.
   */
  private parse(
    text: string,
    status: number,
  ): { value: string; lifetimeMs: number } {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      payload = undefined;
    }
    const value = isRecord(payload) ? payload.access_token : undefined;
    // Entra's v2.0 endpoint answers a number; the v1.0 one answered a string of digits.
    const expiresIn = isRecord(payload) ? Number(payload.expires_in) : NaN;
    if (typeof value !== 'string' || !value || !(expiresIn > 0))
      throw new ProviderError(
        this.provider,
        this.reason('malformed answer (no access_token or expires_in)'),
        { kind: 'http', status },
      );
    return { value, lifetimeMs: expiresIn * 1000 };
  }

  /** The reason, prefixed and cut to a line, with the client secret replaced should it ever be echoed. */
  private reason(text: string): string {
    return shortReason(
      `Entra token request failed: ${text}`,
      this.settings.clientSecret,
    );
  }
}

function margin(lifetimeMs: number): number {
  return Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2);
}

/**
 * `: invalid_client: AADSTS7000215: Invalid client secret provided...` from Entra's
 * `{error, error_description}` (the description's first line: its trace and correlation ids follow).
 */
function describeError(text: string): string {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return '';
  }
  const error = errorMessageOf(payload);
  const description =
    isRecord(payload) && typeof payload.error_description === 'string'
      ? payload.error_description
      : undefined;
  return [error, description]
    .filter((part): part is string => Boolean(part))
    .map((part) => `: ${part}`)
    .join('');
}

/**
 * fetch's `TypeError: fetch failed` says nothing: its cause names the refused or reset connection. Read
 * by shape, not instanceof: the error may come from another realm (Node's fetch under Jest's sandbox).
 */
function transportReason(error: unknown, timeoutMs: number): string {
  if (!isRecord(error)) return 'connection failed';
  if (error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = error.cause;
  if (isRecord(cause) && typeof cause.message === 'string' && cause.message)
    return typeof cause.code === 'string' && !cause.message.includes(cause.code)
      ? `${cause.message} (${cause.code})`
      : cause.message;
  return typeof error.message === 'string' && error.message
    ? error.message
    : 'connection failed';
}

/** The shared promise, or this caller's abort, whichever comes first (the base class reports it as `aborted`). */
function untilAborted<T>(
  promise: Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () =>
      reject(new Error('aborted while waiting for the Entra token'));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    void promise
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', abort));
  });
}
