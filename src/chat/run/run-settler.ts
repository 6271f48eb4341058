import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { Clock } from '../../common/clock';
import { isDatabaseUnavailable } from '../../common/errors/database-unavailable';
import { AppLogger } from '../../common/logging/app-logger';
import { inSpan } from '../../common/tracing/spans';
import { doublingDelays, retrying } from '../../common/waiting';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Settlement } from '../chat-requests.repository';
import { Generation } from '../generation';
import { RunOutcome, RunUsage } from '../live/live-event';
import { creditsFor, settledCredits } from '../pricing';
import { Payer, RunStore } from '../run-store';
import { NO_USAGE } from '../stored-run';
import { billedModel, ChatTurn, RunPlan } from './chat-turn';

/** A settlement the database refused is tried again after 250 ms, then twice as long each time, up to 5 s apart. */
const SETTLE_RETRY_FIRST_MS = 250;
const SETTLE_RETRY_MAX_MS = 5_000;

/**
 * Settling a generated run in one statement: its messages, its ledger entry and its quota (reserved to
 * used at the actual cost), or nothing billed when it produced nothing.
 * docs/adr/0028-detached-generation-and-settlement.md
 */
@Injectable()
export class RunSettler {
  constructor(
    private readonly store: RunStore,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  /** How the run ended, as its clients are told: with its usage once settled. */
  async settle(
    user: SessionUser,
    turn: ChatTurn,
    plan: RunPlan,
    generation: Generation,
    requestId?: string,
  ): Promise<RunOutcome> {
    const outcome: RunOutcome = generation.failure
      ? { status: 'failed', errorCode: generation.failure }
      : { status: generation.stopped ? 'stopped' : 'completed' };
    const settlement = settlementOf(
      turn,
      plan,
      generation,
      outcome,
      this.clock.now(),
    );
    const settled = await inSpan(
      'chat.settle',
      { 'chat.billed': settlement.billed },
      () =>
        this.settleThroughOutage(
          { userId: user.id, organizationId: plan.organizationId },
          settlement,
          requestId,
        ),
    );
    if (settled) return { ...outcome, usage: usageOf(settlement) };
    // Swept meanwhile (this instance had lost the database for longer than the lease): what the client
    // received is kept, so a retry replays it with the failure instead of claiming none.
    if (generation.text)
      await this.store
        .keepInterruptedText(plan.runId, generation.text)
        .catch((error: unknown) =>
          this.log.warn(
            { err: error, requestId, runId: plan.runId },
            'interrupted text not kept',
          ),
        );
    return { status: 'failed', errorCode: 'generation_interrupted' };
  }

  /**
   * The settlement, tried again while the database is unreachable, for up to one lease: the lease is still
   * held (renewed as soon as the database is back), so a short outage loses nothing. False if swept.
   */
  private settleThroughOutage(
    payer: Payer,
    settlement: Settlement,
    requestId?: string,
  ): Promise<boolean> {
    return retrying(() => this.store.settle(payer, settlement), {
      delays: doublingDelays(SETTLE_RETRY_FIRST_MS, SETTLE_RETRY_MAX_MS),
      giveUpAt: Date.now() + this.config.chat.leaseMs,
      retryable: isDatabaseUnavailable,
      onRetry: (error, retryInMs) =>
        this.log.warn(
          { err: error, requestId, runId: settlement.id, retryInMs },
          'chat settlement failed: trying again',
        ),
    });
  }
}

/**
 * How the run is settled (messages, ledger entry and quota in one statement): billed when it completed,
 * produced text or ran tools (a stopped or broken-off answer pays for what was produced).
 */
export function settlementOf(
  turn: ChatTurn,
  plan: RunPlan,
  generation: Generation,
  outcome: RunOutcome,
  finishedAt: Date,
): Settlement {
  // Tools that ran are work done (and model calls made) even when no text followed.
  const billed =
    outcome.status === 'completed' ||
    generation.text.length > 0 ||
    (generation.toolSteps ?? 0) > 0;
  const inputTokens =
    generation.usage?.inputTokens ?? plan.estimatedInputTokens;
  const cachedInputTokens = Math.min(
    generation.usage?.cachedInputTokens ?? 0,
    inputTokens,
  );
  const outputTokens = generation.usage?.outputTokens ?? generation.chunks;
  const model = billedModel(plan);
  return {
    id: plan.runId,
    status: outcome.status,
    responseBody: generation.text,
    errorCode: outcome.status === 'failed' ? outcome.errorCode : null,
    finishedAt,
    billed,
    messages: [
      ...turn.messages,
      { role: 'assistant', content: generation.text },
    ],
    anchor: turn.anchor,
    modelId: model.id,
    ...(model.id !== plan.model.id ? { requestedModelId: plan.model.id } : {}),
    skill: turn.skill,
    inputTokens,
    cachedInputTokens,
    outputTokens,
    credits: billed
      ? creditsOf(
          plan,
          generation,
          inputTokens,
          outputTokens,
          cachedInputTokens,
        )
      : 0,
    ...((generation.toolSteps ?? 0) > 0
      ? {
          steps: generation.steps ?? [],
          toolCalls: generation.toolOutcomes ?? [],
        }
      : {}),
  };
}

/**
 * The run's cost, never above what it reserved: each model call of a run that used tools is priced as the
 * request it was (its per-request price included); a run of one call as before.
 */
function creditsOf(
  plan: RunPlan,
  generation: Generation,
  inputTokens: number,
  outputTokens: number,
  cachedInputTokens: number,
): number {
  const model = billedModel(plan);
  const steps = generation.steps ?? [];
  if ((generation.toolSteps ?? 0) === 0)
    return settledCredits(
      model,
      plan.reservedCredits,
      inputTokens,
      outputTokens,
      cachedInputTokens,
    );
  return Math.min(
    plan.reservedCredits,
    steps.reduce(
      (sum, step) =>
        sum +
        creditsFor(
          model,
          step.inputTokens,
          step.outputTokens,
          step.cachedInputTokens,
        ),
      generation.toolCredits ?? 0,
    ),
  );
}

/** What a settled run reports: its ledger entry's figures, or zeros when nothing was billed. */
function usageOf(settlement: Settlement): RunUsage {
  return settlement.billed
    ? {
        inputTokens: settlement.inputTokens,
        cachedInputTokens: settlement.cachedInputTokens,
        outputTokens: settlement.outputTokens,
        credits: settlement.credits,
        model: settlement.modelId,
      }
    : NO_USAGE;
}
