import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Metrics } from '../../infra/metrics/metrics';
import { EndpointKey } from '../../models/endpoints/endpoint-settings';
import { Endpoint, ProviderEndpoints } from '../../models/provider-endpoints';
import { ChatMessage, ToolSpec } from '../../models/providers/model-provider';
import { EndpointHealth } from '../../models/routing/endpoint-health';
import { generate, Generation } from '../generation';
import { estimateInputTokens, reservationFor } from '../pricing';
import { RunStore } from '../run-store';
import { RunModel, RunPlan } from './chat-turn';
import { backoffMs, RoutingVerdict, verdictOf } from './routing-verdict';
import { shortReason } from '../../models/providers/upstream-error';

const NO_MODEL_CALLED = 'no model of the run could be called';

/** One model call of a run, as the executor asks for it. */
export interface RoutedCall {
  prompt: ChatMessage[];
  tools?: ToolSpec[];
  /** Each piece of text as it arrives (the first one fixes the model that answers). */
  onText: (text: string) => void;
  stop: AbortSignal;
  requestId?: string;
}

/**
 * Routing one model call of a run (docs/adr/0063-providers-and-routing.md): before the first token only,
 * a failure is retried (another key of the pool after a 429 or a refused key, else after a backoff with
 * jitter), then the model's fallbacks the paying plan allows are tried in order, each with its
 * reservation grown first when it costs more. Once text (or a tool call) came from a call, that call is
 * the answer whatever follows: nothing delivered is ever asked for again. The model that answered is
 * kept on the plan (`answered`): the run is billed at it, and its later steps use it.
 */
@Injectable()
export class ModelRouter {
  constructor(
    private readonly endpoints: ProviderEndpoints,
    private readonly store: RunStore,
    private readonly health: EndpointHealth,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  async call(plan: RunPlan, call: RoutedCall): Promise<Generation> {
    // A run's later steps stay with the model that answered its first.
    const candidates = plan.answered
      ? [plan.answered]
      : [plan.model, ...plan.fallbacks];
    const budget = { attempts: this.config.providers.maxAttempts };
    let last: Generation | undefined;
    let tried: RunModel | undefined;
    for (const [index, model] of candidates.entries()) {
      const endpoint = this.endpoints.find(model.endpoint);
      if (!endpoint) {
        this.metrics.providerFailure(model.endpoint, model.id, 'unavailable');
        continue;
      }
      if (index > 0) {
        // A fallback whose keys all rest is not reserved for: it could not be called.
        if (!this.endpoints.hasKey(endpoint, model.upstreamModel)) {
          this.metrics.providerFailure(endpoint.id, model.id, 'no_key');
          continue;
        }
        if (!(await this.affords(plan, model, call))) continue;
        if (tried) this.metrics.providerFallback(tried.id, model.id);
        await this.recordFallback(plan, model, call.requestId);
      }
      tried = model;
      const outcome = await this.callModel(plan, model, endpoint, call, budget);
      if (outcome.answered) return outcome.generation;
      last = outcome.generation;
      // Refused by the provider's content filter: no other provider is asked the same.
      if (outcome.final) break;
      if (budget.attempts <= 0 || call.stop.aborted) break;
    }
    // Stopped while waiting to call again: a stop, not a failure (nothing came, nothing is billed).
    if (call.stop.aborted) return { text: '', chunks: 0, stopped: true };
    return last ?? failedWithoutCall(NO_MODEL_CALLED);
  }

  /** The model's calls: the first, then its retries, until one answers or none may follow. */
  private async callModel(
    plan: RunPlan,
    model: RunModel,
    endpoint: Endpoint,
    call: RoutedCall,
    budget: { attempts: number },
  ): Promise<{ answered: boolean; final?: boolean; generation: Generation }> {
    let last: Generation | undefined;
    for (let retry = 0; retry <= this.config.providers.retries; retry++) {
      if (budget.attempts <= 0 || call.stop.aborted) break;
      const key = this.endpoints.nextKey(endpoint, model.upstreamModel);
      if (!key) {
        this.metrics.providerFailure(endpoint.id, model.id, 'no_key');
        last ??= failedWithoutCall(
          `every key of the ${endpoint.id} endpoint is resting after a 429 or a refusal`,
        );
        break;
      }
      if (retry > 0) this.metrics.providerRetry(endpoint.id, model.id);
      budget.attempts -= 1;
      const generation = await this.attempt(plan, model, endpoint, key, call);
      if (answered(generation)) {
        // Tool calls without text also answer: nothing of this call is asked for again.
        plan.answered ??= model;
        return { answered: true, generation };
      }
      last = generation;
      const verdict = verdictFor(
        generation,
        key,
        this.config.providers.keyCooldownMs,
      );
      this.metrics.providerFailure(endpoint.id, model.id, verdict.label);
      this.log.warn(
        {
          requestId: call.requestId,
          runId: plan.runId,
          model: model.id,
          endpoint: endpoint.id,
          key: key.label,
          reason: generation.failureReason,
          retry: verdict.retry,
        },
        'model call failed before its first token',
      );
      if (verdict.coolKeyMs !== undefined) {
        this.endpoints.coolDown(
          endpoint,
          key,
          verdict.coolKeyMs,
          verdict.coolScope === 'model' ? model.upstreamModel : undefined,
        );
        this.metrics.keyCooldown(endpoint.id);
        this.health.cooledDown(endpoint.id);
      }
      if (verdict.final) return { answered: false, final: true, generation };
      if (!verdict.retry) break;
      // Another key is tried at once; the same upstream again only after a pause.
      if (verdict.coolKeyMs === undefined) {
        const pause = verdict.waitMs ?? this.backoff(retry);
        if (pause > this.config.providers.retryMaxMs) break;
        await sleep(pause, undefined, { signal: call.stop }).catch(
          () => undefined,
        );
      }
    }
    return {
      answered: false,
      generation: last ?? failedWithoutCall(NO_MODEL_CALLED),
    };
  }

  /** One call with one key, timed to its first token and counted in the endpoint's health. */
  private async attempt(
    plan: RunPlan,
    model: RunModel,
    endpoint: Endpoint,
    key: EndpointKey,
    call: RoutedCall,
  ): Promise<Generation> {
    const firstToken = this.metrics.firstTokenTimer(endpoint.id, model.id);
    const startedAt = performance.now();
    let firstTokenMs: number | undefined;
    const generation: Generation = await generate(
      endpoint.provider,
      {
        upstreamModel: model.upstreamModel,
        messages: call.prompt,
        maxOutputTokens: model.maxOutputTokens,
        ...(key.secret ? { apiKey: key.secret } : {}),
        ...(plan.cacheablePrefix
          ? { cacheablePrefix: plan.cacheablePrefix }
          : {}),
        ...(call.tools ? { tools: call.tools } : {}),
      },
      {
        timeoutMs: this.config.chat.providerTimeoutMs,
        firstEventTimeoutMs: this.config.providers.firstTokenTimeoutMs,
        onText: (text) => {
          if (firstTokenMs === undefined) {
            firstTokenMs = performance.now() - startedAt;
            firstToken();
            // Before the text goes out: the stream's head names the model that answers.
            plan.answered ??= model;
          }
          call.onText(text);
        },
        stop: call.stop,
      },
    );
    // An upstream may quote a key in its error: none of the pool's reaches a log or the admins' view.
    if (generation.failureReason)
      generation.failureReason = shortReason(
        generation.failureReason,
        endpoint.keys.map((pooled) => pooled.secret),
      );
    this.health.record(endpoint.id, {
      ok: answered(generation),
      firstTokenMs,
      failure: answered(generation) ? undefined : generation.failureReason,
    });
    return generation;
  }

  /**
   * Whether the run may go on to `model`: its reservation already covers the call, or grows to (one
   * conditional statement); refused by the day's limit: the fallback is skipped.
   */
  private async affords(
    plan: RunPlan,
    model: RunModel,
    call: RoutedCall,
  ): Promise<boolean> {
    const needed = reservationFor(model, estimateInputTokens(call.prompt));
    const more = needed - plan.reservedCredits;
    if (more <= 0) return true;
    try {
      if (!(await this.store.growReservation(plan.runId, more))) return false;
    } catch (error) {
      this.log.error(
        { err: error, requestId: call.requestId, runId: plan.runId },
        'a fallback could not be reserved',
      );
      return false;
    }
    plan.reservedCredits += more;
    return true;
  }

  /**
   * Writes the fallback about to be called to the run, before its first text can exist: a client joining
   * the run on another instance reads it there once the text came (the settlement writes the final word).
   */
  private async recordFallback(
    plan: RunPlan,
    model: RunModel,
    requestId: string | undefined,
  ): Promise<void> {
    try {
      await this.store.recordAnsweringModel(plan.runId, model.id);
    } catch (error) {
      this.log.warn(
        { err: error, requestId, runId: plan.runId },
        'the fallback could not be recorded before its call',
      );
    }
  }

  private backoff(retry: number): number {
    return backoffMs(
      retry,
      this.config.providers.retryBaseMs,
      this.config.providers.retryMaxMs,
    );
  }
}

/**
 * The verdict for this key: an endpoint without keys has nothing to rest, so its 429 is a pause (its
 * Retry-After) before the same endpoint is called again; an endpoint of one credential rests it for the
 * model that was refused only.
 */
function verdictFor(
  generation: Generation,
  key: EndpointKey,
  cooldownMs: number,
): RoutingVerdict {
  const verdict = verdictOf(generation, cooldownMs);
  if (verdict.coolKeyMs === undefined) return verdict;
  // One credential for the whole endpoint (Bedrock, an Entra application): a refusal names one model
  // (AccessDenied for a model not enabled), so only that model rests.
  if (key.fingerprint !== 'none' && key.secret === undefined)
    return { ...verdict, coolScope: 'model' };
  if (key.fingerprint !== 'none') return verdict;
  const waitMs = generation.providerFailure?.retryAfterMs;
  return {
    retry: verdict.retry,
    label: verdict.label,
    ...(waitMs !== undefined ? { waitMs } : {}),
  };
}

/** Text or a tool call came: the call answered (even if it broke off after). */
function answered(generation: Generation): boolean {
  return (
    !generation.failure ||
    generation.chunks > 0 ||
    (generation.toolCalls?.length ?? 0) > 0 ||
    generation.stopped === true
  );
}

/** A run that could make no (further) call fails as a provider failure: nothing came, nothing is billed. */
function failedWithoutCall(reason: string): Generation {
  return {
    text: '',
    chunks: 0,
    failure: 'provider_error',
    failureReason: reason,
  };
}
