import { Inject, Injectable } from '@nestjs/common';
import { Span, SpanStatusCode } from '@opentelemetry/api';
import { SessionUser } from '../../auth/session-user';
import { AppLogger } from '../../common/logging/app-logger';
import { inSpan } from '../../common/tracing/spans';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Metrics } from '../../infra/metrics/metrics';
import { ChatMessage } from '../../models/providers/model-provider';
import { ToolOutcome, ToolRunner } from '../../tools/run/tool-runner';
import { Generation } from '../generation';
import { LeaseKeeper } from '../lease-keeper';
import { RunOutcome } from '../live/live-event';
import { LiveWriter } from '../live/live-streams';
import { RunStops } from '../stop/run-stops';
import { billedModel, ChatTurn, RunPlan } from './chat-turn';
import { ModelRouter } from './model-router';
import { RunSettler } from './run-settler';
import { resultText } from './tool-history';
import { estimateInputTokens, reservationFor } from '../pricing';
import { RunStore } from '../run-store';

/**
 * Executing a claimed run, detached from the client (generation goes on after a disconnect, so the answer
 * is stored and billed): the run's lease and stop are held while the model answers into the live writer,
 * then the run is settled and its clients are told how it ended.
 * docs/adr/0028-detached-generation-and-settlement.md
 */
@Injectable()
export class RunExecutor {
  constructor(
    private readonly leases: LeaseKeeper,
    private readonly stops: RunStops,
    private readonly settler: RunSettler,
    private readonly tools: ToolRunner,
    private readonly store: RunStore,
    private readonly router: ModelRouter,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  execute(
    user: SessionUser,
    turn: ChatTurn,
    plan: RunPlan,
    writer: LiveWriter,
    requestId?: string,
    canApprove = false,
  ): Promise<void> {
    const attributes = {
      'chat.run_id': plan.runId,
      'gen_ai.system': plan.model.endpoint,
      'gen_ai.request.model': plan.model.upstreamModel,
      'chat.model': plan.model.id,
    };
    return inSpan('chat.run', attributes, async (span) => {
      const outcome = await this.generateAndSettle(
        user,
        turn,
        plan,
        writer,
        requestId,
        canApprove,
      );
      this.record(plan, outcome, span);
      await writer.end(outcome);
    });
  }

  private async generateAndSettle(
    user: SessionUser,
    turn: ChatTurn,
    plan: RunPlan,
    writer: LiveWriter,
    requestId: string | undefined,
    canApprove: boolean,
  ): Promise<RunOutcome> {
    this.leases.hold(plan.runId);
    const stop = this.stops.register(plan.runId);
    try {
      const generation = await this.runSteps(
        user,
        plan,
        writer,
        stop,
        requestId,
        canApprove,
      );
      return await this.settler.settle(user, turn, plan, generation, requestId);
    } catch (error) {
      // Settlement failed (database down): the lease runs out and the sweeper releases the reservation.
      this.log.error(
        { err: error, requestId, runId: plan.runId },
        'chat settlement failed',
      );
      return { status: 'failed', errorCode: 'generation_interrupted' };
    } finally {
      this.leases.release(plan.runId);
      this.stops.release(plan.runId);
    }
  }

  /**
   * The run's steps: the model's answer; when it asks for tools (and the run offers some), the calls run,
   * their results go back to it and it is asked again, until it answers without a tool call, is stopped or
   * fails, or TOOL_MAX_STEPS model calls were made. One Generation for the whole run: all text, summed usage.
   * docs/adr/0061-tools.md
   */
  private async runSteps(
    user: SessionUser,
    plan: RunPlan,
    writer: LiveWriter,
    stop: AbortSignal,
    requestId: string | undefined,
    canApprove: boolean,
  ): Promise<Generation> {
    const total: Generation = { text: '', chunks: 0 };
    let prompt = plan.prompt;
    for (let step = 0; ; step++) {
      if (step > 0) {
        const refusal = await this.reserveNextStep(plan, prompt, requestId);
        if (refusal) return { ...total, failure: refusal };
      }
      const generation = await this.generateAnswer(
        plan,
        prompt,
        writer,
        stop,
        requestId,
      );
      const calls = generation.toolCalls ?? [];
      // A step that said nothing of its usage still used tokens (when other steps did say, the sum would
      // leave them out): estimated as the settlement estimates a run.
      if (!generation.usage && (generation.chunks > 0 || calls.length > 0))
        generation.usage = {
          inputTokens: estimateInputTokens(prompt),
          outputTokens: generation.chunks + calls.length,
        };
      addStep(total, generation);
      if (!plan.tools || calls.length === 0 || generation.failure) return total;
      if (generation.stopped || stop.aborted)
        return { ...total, stopped: true };
      if (step + 1 >= this.config.tools.maxSteps) return total;
      let outcomes: ToolOutcome[] | null;
      try {
        outcomes = await this.tools.runStep(
          {
            caller: user,
            runId: plan.runId,
            conversationId: plan.conversationId,
            step,
            textOffset: total.text.length,
            emit: (event) => writer.tool(event),
            canApprove,
            stop,
            reserve: (credits) => this.reserveCredits(plan, credits),
          },
          plan.tools,
          calls,
        );
      } catch (error) {
        // The executions could not be recorded (database lost, conversation deleted): nothing was sent.
        this.log.error(
          { err: error, requestId, runId: plan.runId },
          'tool calls could not be recorded',
        );
        return { ...total, failure: 'generation_interrupted' };
      }
      if (!outcomes) {
        // Nothing was recorded, so nothing was sent: the run ended meanwhile (swept).
        return { ...total, failure: 'generation_interrupted' };
      }
      total.toolSteps = (total.toolSteps ?? 0) + 1;
      (total.toolOutcomes ??= []).push(
        ...outcomes.map((outcome) => ({
          id: outcome.executionId,
          tool: outcome.toolId,
          status: outcome.status,
          credits: outcome.credits,
        })),
      );
      total.toolCredits =
        (total.toolCredits ?? 0) +
        outcomes.reduce((sum, outcome) => sum + outcome.credits, 0);
      prompt = [...prompt, ...stepMessages(generation.text, outcomes)];
      if (stop.aborted) return { ...total, stopped: true };
    }
  }

  /**
   * Reserves what the next model call may cost (its estimated input and its most output), in one
   * conditional statement; the settlement bills the run's actual cost, never above all it reserved.
   * Answers why the run cannot go on, or undefined when it can.
   */
  private async reserveNextStep(
    plan: RunPlan,
    prompt: ChatMessage[],
    requestId: string | undefined,
  ): Promise<'quota_exceeded' | 'generation_interrupted' | undefined> {
    const credits = reservationFor(
      billedModel(plan),
      estimateInputTokens(prompt),
    );
    try {
      if (!(await this.reserveCredits(plan, credits))) return 'quota_exceeded';
    } catch (error) {
      this.log.error(
        { err: error, requestId, runId: plan.runId },
        'the next step could not be reserved',
      );
      return 'generation_interrupted';
    }
    return undefined;
  }

  /** Reserves credits more on the run, in one conditional statement; false when the day's limit refuses. */
  private async reserveCredits(
    plan: RunPlan,
    credits: number,
  ): Promise<boolean> {
    if (!(await this.store.growReservation(plan.runId, credits))) return false;
    // The plan's reservation is the settlement's cap: it now holds these credits too.
    plan.reservedCredits += credits;
    return true;
  }

  /**
   * One model call, streamed into the writer as it comes, through the router (retries and fallbacks before
   * the first token); a provider failure is in the result, not thrown.
   */
  private generateAnswer(
    plan: RunPlan,
    prompt: ChatMessage[],
    writer: LiveWriter,
    stop: AbortSignal,
    requestId?: string,
  ): Promise<Generation> {
    const attributes = {
      'gen_ai.system': plan.model.endpoint,
      'gen_ai.request.model': plan.model.upstreamModel,
    };
    return inSpan('chat.generate', attributes, async (span) => {
      let waitingForFirstToken = true;
      const generation = await this.router.call(plan, {
        prompt,
        ...(plan.tools ? { tools: plan.tools.specs() } : {}),
        onText: (text) => {
          if (waitingForFirstToken) span.addEvent('first token');
          waitingForFirstToken = false;
          writer.append(text);
        },
        stop,
        requestId,
      });
      const answered = billedModel(plan);
      span.setAttribute('gen_ai.response.model', answered.upstreamModel);
      if (generation.failure) {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: generation.failure,
        });
        this.log.warn(
          {
            requestId,
            runId: plan.runId,
            model: answered.id,
            failure: generation.failure,
            reason: generation.failureReason,
          },
          'model provider failed',
        );
      }
      return generation;
    });
  }

  private record(plan: RunPlan, outcome: RunOutcome, span: Span): void {
    this.metrics.runFinished(billedModel(plan).id, outcome);
    span.setAttributes({
      'chat.outcome': outcome.status,
      'gen_ai.usage.input_tokens': outcome.usage?.inputTokens ?? 0,
      'gen_ai.usage.output_tokens': outcome.usage?.outputTokens ?? 0,
    });
    if (outcome.status === 'failed')
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: outcome.errorCode,
      });
  }
}

/** Adds one model call to the run's generation: its text after the text so far, its usage to the sum. */
function addStep(total: Generation, step: Generation): void {
  total.text += step.text;
  total.chunks += step.chunks;
  if (step.usage) (total.steps ??= []).push(step.usage);
  if (step.usage)
    total.usage = {
      inputTokens: (total.usage?.inputTokens ?? 0) + step.usage.inputTokens,
      outputTokens: (total.usage?.outputTokens ?? 0) + step.usage.outputTokens,
      cachedInputTokens:
        (total.usage?.cachedInputTokens ?? 0) +
        (step.usage.cachedInputTokens ?? 0),
    };
  if (step.failure) {
    total.failure = step.failure;
    total.failureReason = step.failureReason;
  }
  if (step.stopped) total.stopped = true;
}

/** What the model reads back after a step: its own answer with the calls, then each call's result. */
function stepMessages(text: string, outcomes: ToolOutcome[]): ChatMessage[] {
  return [
    {
      role: 'assistant',
      content: text,
      toolCalls: outcomes.map((outcome) => ({
        id: outcome.executionId,
        name: outcome.call.name,
        arguments: outcome.call.arguments,
      })),
    },
    ...outcomes.map((outcome): ChatMessage => ({
      role: 'tool',
      toolCallId: outcome.executionId,
      content: resultText(outcome),
    })),
  ];
}
