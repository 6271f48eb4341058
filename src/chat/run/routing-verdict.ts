import { ProviderFailureLabel } from '../../infra/metrics/metrics';
import { Generation } from '../generation';

/**
 * What the router does after a call failed before its first token (docs/adr/0063-providers-and-routing.md):
 * call the model again (`retry`), and first rest the key (`coolKeyMs`) when the upstream refused it or
 * said it was over its limit. `waitMs`: how long the upstream asked to be left alone (Retry-After).
 */
export interface RoutingVerdict {
  retry: boolean;
  coolKeyMs?: number;
  /** What rests: the key for every model (a refused key), or for this model only (its rate limit). */
  coolScope?: 'key' | 'model';
  waitMs?: number;
  /** The provider refused the content: neither retried nor sent to a fallback. */
  final?: boolean;
  label: ProviderFailureLabel;
}

/** A Retry-After of 0 (or in the past) still rests the key this long, or it would be taken again at once. */
const MIN_COOLDOWN_MS = 1_000;

/**
 * Retried: no connection, a 5xx, 408, 409, 425, 429, a first-token timeout, a stream broken before its
 * first token. Not retried (the fallbacks are still tried): the other 4xx, which would fail again. Neither
 * retried nor sent to a fallback: a refusal of the provider's content filter. A 429 rests the key for
 * that model (rate limits are per model) for its Retry-After (or `cooldownMs`), a 401, a 403 or a key
 * the upstream calls invalid rests the key for every model for `cooldownMs`: the next call takes another
 * key of the pool.
 */
export function verdictOf(
  generation: Pick<
    Generation,
    'failure' | 'providerFailure' | 'firstTokenTimedOut'
  >,
  cooldownMs: number,
): RoutingVerdict {
  if (generation.failure === 'provider_timeout')
    return { retry: true, label: 'timeout' };
  const failure = generation.providerFailure;
  if (!failure) return { retry: false, label: 'stream' };
  switch (failure.kind) {
    case 'connection':
      return { retry: true, label: 'connection' };
    case 'stream':
      return { retry: true, label: 'stream' };
    case 'aborted':
      return { retry: false, label: 'stream' };
    case 'refused':
      return { retry: false, final: true, label: 'refused' };
    case 'http':
      if (failure.keyRejected)
        return {
          retry: true,
          coolKeyMs: cooldownMs,
          coolScope: 'key',
          label: 'http_auth',
        };
      return httpVerdict(failure.status ?? 0, failure.retryAfterMs, cooldownMs);
  }
}

function httpVerdict(
  status: number,
  retryAfterMs: number | undefined,
  cooldownMs: number,
): RoutingVerdict {
  if (status === 429)
    return {
      retry: true,
      coolKeyMs: Math.max(retryAfterMs ?? cooldownMs, MIN_COOLDOWN_MS),
      coolScope: 'model',
      label: 'http_429',
    };
  if (status === 401 || status === 403)
    return {
      retry: true,
      coolKeyMs: cooldownMs,
      coolScope: 'key',
      label: 'http_auth',
    };
  if (status >= 500 || status === 408 || status === 409 || status === 425)
    return {
      retry: true,
      ...(retryAfterMs !== undefined ? { waitMs: retryAfterMs } : {}),
      label: status >= 500 ? 'http_5xx' : 'http_4xx',
    };
  return { retry: false, label: 'http_4xx' };
}

/**
 * The pause before retry `n` (from 0): full jitter over base x 2^n, capped at `maxMs` (AWS's backoff
 * advice: spread retries of many clients over the whole window). `random` in [0, 1).
 */
export function backoffMs(
  n: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(n, 20));
  return Math.floor(random() * ceiling);
}
