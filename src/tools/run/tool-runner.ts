import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { sha256Hex } from '../../common/hashing';
import { uuidv7 } from '../../common/ids';
import { RATE_LIMIT_STORE } from '../../common/rate-limit/rate-limit.module';
import { RateLimitStore } from '../../common/rate-limit/rate-limit.store';
import { storableJson, storableText } from '../../common/text/storable';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { ToolCall } from '../../models/providers/model-provider';
import { JsonSchemaService } from '../../skills/json-schema.service';
import { ToolApprovals } from '../approvals/tool-approvals.service';
import { Tool, ToolError } from '../tool';
import { ToolBinding } from './tool-binding';
import { canonicalArguments, ToolEvent, ToolStatus } from './tool-events';
import { ToolExecutionsRepository } from './tool-executions.repository';

/** Where a step's calls belong. */
export interface StepContext {
  caller: SessionUser;
  runId: string;
  conversationId: string;
  step: number;
  /** Characters of the answer's text so far: where the step's events stand. */
  textOffset: number;
  /** Sends each event to the run's clients as it happens. */
  emit: (event: ToolEvent) => void;
  /** The run's client takes events (it can approve); a plain-text client's `confirm` calls are denied. */
  canApprove: boolean;
  /** The run's stop: a call waiting for approval is denied. */
  stop: AbortSignal;
  /** Reserves credits for the step's priced calls on the run (false: the day's limit refuses them). */
  reserve: (credits: number) => Promise<boolean>;
}

/** One call's outcome, as the model reads it back. */
export interface ToolOutcome {
  call: ToolCall;
  executionId: string;
  /** The tool's id (the model's name for it when it named none of the run's). */
  toolId: string;
  /** Credits charged for it: its tool's price when it ran, else 0. */
  credits: number;
  status: ToolStatus;
  content: string;
}

/** A call checked and ready, or already answered (unknown tool, arguments that do not fit). */
interface Prepared {
  call: ToolCall;
  executionId: string;
  tool?: Tool;
  toolId: string;
  args: Record<string, unknown>;
  refusal?: { status: ToolStatus; content: string };
  /** Waits for its owner's decision before it runs. */
  needsApproval?: boolean;
  approval?: { id: string; expiresAt: Date };
}

/**
 * Runs the tool calls of one model answer (docs/adr/0061-tools.md): every call is recorded before it is
 * sent (unique per run, step and call: what is recorded already is never sent again), its arguments are
 * checked against the tool's schema (a mismatch is an error the model reads, not a failed run), the calls
 * run at once, each bounded by TOOL_TIMEOUT_MS, and each outcome is stored before the model sees it. The
 * clients get every `tool_call`, then every `tool_result`, in call order, so a replay tells the same story.
 */
@Injectable()
export class ToolRunner {
  constructor(
    private readonly executions: ToolExecutionsRepository,
    private readonly schemas: JsonSchemaService,
    private readonly approvals: ToolApprovals,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RATE_LIMIT_STORE) private readonly counters: RateLimitStore,
    private readonly log: AppLogger,
  ) {}

  /** The step's outcomes, in call order; null when nothing could be recorded (the run has ended). */
  async runStep(
    context: StepContext,
    binding: ToolBinding,
    calls: ToolCall[],
  ): Promise<ToolOutcome[] | null> {
    const prepared = await Promise.all(
      calls.map((call) => this.prepare(binding, call, context)),
    );
    const fresh = await this.executions.start(
      prepared.map((entry, callIndex) => ({
        id: entry.executionId,
        chatRequestId: context.runId,
        conversationId: context.conversationId,
        userId: context.caller.id,
        step: context.step,
        callIndex,
        callId: entry.call.id,
        toolId: entry.toolId,
        arguments: entry.args,
        textOffset: context.textOffset,
      })),
    );
    if (fresh.size === 0) return null;
    for (const entry of prepared)
      context.emit({
        type: 'tool_call',
        id: entry.executionId,
        tool: entry.toolId,
        arguments: entry.args,
      });
    await this.reservePrices(context, prepared);
    for (const entry of prepared)
      if (entry.needsApproval && fresh.has(entry.executionId) && !entry.refusal)
        await this.askApproval(context, entry);
    const outcomes = await Promise.all(
      prepared.map(async (entry) =>
        fresh.has(entry.executionId)
          ? this.execute(context, entry)
          : {
              call: entry.call,
              executionId: entry.executionId,
              toolId: entry.toolId,
              credits: 0,
              status: 'unknown' as const,
              content: 'This call was recorded before and is not run again.',
            },
      ),
    );
    for (const outcome of outcomes)
      context.emit({
        type: 'tool_result',
        id: outcome.executionId,
        tool: outcome.toolId,
        status: outcome.status,
        content: outcome.content,
      });
    return outcomes;
  }

  /** Never rejects: a call that cannot even be read is an error the model reads. */
  private async prepare(
    binding: ToolBinding,
    modelCall: ToolCall,
    context: StepContext,
  ): Promise<Prepared> {
    const call = {
      id: storableText(modelCall.id).slice(0, 200),
      name: storableText(modelCall.name).slice(0, 200),
      arguments: modelCall.arguments,
    };
    try {
      return await this.check(binding, call, context);
    } catch (error) {
      this.log.warn({ err: error, tool: call.name }, 'tool call not readable');
      return {
        call,
        executionId: uuidv7(),
        toolId: call.name,
        args: {},
        refusal: { status: 'error', content: 'The call could not be read.' },
      };
    }
  }

  private async check(
    binding: ToolBinding,
    call: ToolCall,
    { caller, canApprove }: StepContext,
  ): Promise<Prepared> {
    const executionId = uuidv7();
    const tool = binding.toolNamed(call.name);
    const toolId = tool?.id ?? call.name;
    const parsed = parseArguments(call.arguments);
    const base = { call, executionId, tool, toolId, args: parsed.args };
    if (!tool)
      return {
        ...base,
        refusal: {
          status: 'error',
          content: `There is no tool named ${call.name} in this conversation.`,
        },
      };
    if (parsed.problem)
      return { ...base, refusal: { status: 'error', content: parsed.problem } };
    const limited = await this.overRateLimit(caller);
    if (limited)
      return { ...base, refusal: { status: 'error', content: limited } };
    const problems = await this.schemas.valueProblems(
      'arguments',
      tool.inputSchema,
      parsed.args,
      `tool:${tool.id}:${sha256Hex(JSON.stringify(tool.inputSchema))}`,
    );
    if (problems.length > 0)
      return {
        ...base,
        refusal: {
          status: 'error',
          content: `The arguments do not fit the tool's input schema: ${problems
            .slice(0, 5)
            .map((problem) => problem.message)
            .join('; ')}`,
        },
      };
    if (tool.approval === 'confirm' && !canApprove)
      return {
        ...base,
        refusal: {
          status: 'denied',
          content:
            "This call needs the user's approval, and this client cannot give it (it reads plain text): it was not run.",
        },
      };
    return { ...base, needsApproval: tool.approval === 'confirm' };
  }

  /**
   * Holds the prices of the calls that may run, all together, before any runs; when the day's credits
   * cannot, none of them runs (each is an error the model reads).
   */
  private async reservePrices(
    context: StepContext,
    prepared: Prepared[],
  ): Promise<void> {
    const priced = prepared.filter(
      (entry) => !entry.refusal && (entry.tool?.price ?? 0) > 0,
    );
    const credits = priced.reduce((sum, entry) => sum + entry.tool!.price, 0);
    if (credits === 0 || (await context.reserve(credits))) return;
    for (const entry of priced)
      entry.refusal = {
        status: 'error',
        content: "The day's credits cannot pay for this call: it was not run.",
      };
  }

  /** Opens the approval and tells the client (`tool_approval`); the call waits for it in execute. */
  private async askApproval(
    context: StepContext,
    entry: Prepared,
  ): Promise<void> {
    const id = uuidv7();
    const expiresAt = await this.approvals.open({
      id,
      executionId: entry.executionId,
      chatRequestId: context.runId,
      userId: context.caller.id,
    });
    entry.approval = { id, expiresAt };
    context.emit({
      type: 'tool_approval',
      approvalId: id,
      id: entry.executionId,
      tool: entry.toolId,
      arguments: entry.args,
      expiresAt: expiresAt.toISOString(),
    });
  }

  private async execute(
    context: StepContext,
    entry: Prepared,
  ): Promise<ToolOutcome> {
    const refused = entry.refusal ?? (await this.approved(context, entry));
    const { status, content } =
      refused ?? (await this.call(context.caller, entry));
    // A call that was sent is charged, whatever it answered.
    const credits = refused ? 0 : (entry.tool?.price ?? 0);
    // Cut first: a cut through a surrogate pair leaves half of it, which storableText replaces, so the
    // client sees what the database keeps.
    const bounded = storableText(this.bounded(content));
    await this.executions
      .finish(entry.executionId, status, bounded)
      .catch((error: unknown) =>
        // Still `running` in the database: once the run ends the sweeper marks it `unknown`.
        this.log.warn(
          { err: error, executionId: entry.executionId },
          'tool outcome not recorded',
        ),
      );
    return {
      call: entry.call,
      executionId: entry.executionId,
      toolId: entry.toolId,
      credits,
      status,
      content: bounded,
    };
  }

  /** Undefined when the call may run; else its denial (by the owner, at expiry, or by a stop). */
  private async approved(
    context: StepContext,
    entry: Prepared,
  ): Promise<{ status: ToolStatus; content: string } | undefined> {
    if (!entry.needsApproval) return undefined;
    const decision = entry.approval
      ? await this.approvals.waitFor(
          entry.approval.id,
          entry.approval.expiresAt,
          context.stop,
        )
      : 'denied';
    if (decision === 'approved') return undefined;
    return {
      status: 'denied',
      content:
        'The user did not approve this call (denied, no decision in time, or the run was stopped): it was not run.',
    };
  }

  /** Why `caller` may not make another tool call now (RATE_LIMIT_TOOLS), or undefined. */
  private async overRateLimit(
    caller: SessionUser,
  ): Promise<string | undefined> {
    const { max, windowSeconds } = this.config.tools.rateLimit;
    const { count, resetInMs } = await this.counters.hit(
      `tools-user:${caller.id}`,
      windowSeconds * 1000,
    );
    if (count <= max) return undefined;
    return `Too many tool calls: at most ${max} per ${windowSeconds} s; the next one in ${Math.ceil(resetInMs / 1000)} s. It was not run.`;
  }

  /** The tool's answer, or why there is none: never throws. */
  private async call(
    caller: SessionUser,
    entry: Prepared,
  ): Promise<{ status: ToolStatus; content: string }> {
    const timeoutMs = this.config.tools.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      const answer = await Promise.race([
        entry.tool!.execute(caller, entry.args, {
          executionId: entry.executionId,
        }),
        timedOut,
      ]);
      if (answer === 'timeout')
        return {
          status: 'timeout',
          content: `The tool did not answer within ${timeoutMs} ms.`,
        };
      return { status: 'ok', content: answer };
    } catch (error) {
      if (error instanceof ToolError)
        return { status: 'error', content: error.message };
      this.log.warn(
        { err: error, tool: entry.toolId, executionId: entry.executionId },
        'tool call failed',
      );
      return { status: 'error', content: 'The tool failed.' };
    } finally {
      clearTimeout(timer);
    }
  }

  /** TOOL_RESULT_MAX_CHARS at most, with a marker saying how much was cut. */
  private bounded(content: string): string {
    const max = this.config.tools.resultMaxChars;
    if (content.length <= max) return content;
    return `${content.slice(0, max)}\n[cut: ${content.length - max} more characters not shown]`;
  }
}

/** The model's arguments as an object, or why they are not one. */
function parseArguments(text: string): {
  args: Record<string, unknown>;
  problem?: string;
} {
  if (text.trim() === '') return { args: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return { args: canonicalArguments(storableJson(value)) };
    return { args: {}, problem: 'The arguments must be a JSON object.' };
  } catch {
    return { args: {}, problem: 'The arguments are not valid JSON.' };
  }
}
