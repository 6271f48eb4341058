import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Span, SpanStatusCode } from '@opentelemetry/api';
import { SessionUser } from '../auth/session-user';
import { CatalogCache } from '../catalog/catalog-cache';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { isDatabaseUnavailable } from '../common/errors/database-unavailable';
import { isUuid, uuidv7 } from '../common/ids';
import { AppLogger } from '../common/logging/app-logger';
import { requestContext } from '../common/logging/request-context';
import { inSpan } from '../common/tracing/spans';
import { nextUtcMidnight, utcDay } from '../common/utc-day';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ConversationsRepository } from '../conversations/conversations.repository';
import { ModelProviders } from '../models/model-providers';
import { ChatMessage, ModelProvider } from '../models/providers/model-provider';
import { NotDispatched } from '../infra/database/batcher';
import { Metrics } from '../infra/metrics/metrics';
import { overloaded, RunRequest } from './admission/chat-admission';
import { ClaimResult, Settlement, StoredRun } from './chat-requests.repository';
import { RunStore } from './run-store';
import { ChatStream, toChatStream } from './chat-stream';
import { titleFrom } from './conversation-title';
import { generate, Generation } from './generation';
import { LeaseKeeper } from './lease-keeper';
import { LiveBuffer } from './live/live-buffer';
import {
  isFailureCode,
  LiveEvent,
  RunOutcome,
  RunUsage,
} from './live/live-event';
import { LiveStreams, LiveWriter } from './live/live-streams';
import {
  BYTES_PER_TOKEN,
  estimateInputTokens,
  ModelPrice,
  reservationFor,
  settledCredits,
} from './pricing';
import {
  FileContext,
  FileContextService,
} from '../files/context/file-context.service';
import { RunStops } from './stop/run-stops';

/** One chat turn or Skill run, as the pipeline receives it from POST /v1/chat or POST /v1/skills/:id/run. */
export interface ChatTurn {
  model: string;
  idempotencyKey: string;
  /** What the key stands for: the same key with another fingerprint is refused (422). */
  fingerprint: string;
  conversationId?: string;
  /** The new messages, stored in the conversation and sent after its history. */
  messages: ChatMessage[];
  /**
   * Regenerate and edit: the history ends at `parentId` (null: no history) instead of the conversation's
   * current message, and the new messages are stored after it, as a new branch.
   */
  anchor?: { parentId: string | null };
  /** Sent first and not stored: a Skill's instruction. */
  system?: string;
  skill?: { skillId: string; skillVersionId: string };
  /** The caller's files whose text the model receives (a context section before the history). */
  fileIds?: string[];
  /**
   * Checks that apply only to a request not made before (a Skill's input against its input_schema), and
   * what such a request still needs to know (regenerate, edit: the branch point, its model and Skill): run
   * after the key lookup, so a retry is replayed even if the check would now fail or the conversation has
   * moved on, and before anything is claimed or billed. What it answers completes the turn.
   */
  prepareNewRequest?: () => Promise<TurnCompletion | void>;
}

/** What `prepareNewRequest` may complete of a turn. */
export type TurnCompletion = Partial<
  Pick<ChatTurn, 'model' | 'system' | 'skill' | 'anchor' | 'fileIds'>
>;

/** Everything decided before the claim: which model, what it costs at most, what the model receives. */
interface RunPlan {
  runId: string;
  model: ModelPrice & { id: string; upstreamModel: string };
  provider: ModelProvider;
  conversationId: string;
  newConversation: boolean;
  prompt: ChatMessage[];
  /** The attached files that went into the prompt. */
  files: FileContext['files'];
  estimatedInputTokens: number;
  reservedCredits: number;
  usageDay: Date;
}

/** A follower of a quiet remote run asks the database after 1, 2, 4, 8, then every 8 seconds. */
const MAX_SECONDS_BETWEEN_CHECKS = 8;

/** The section's own words and each file's delimiters, in tokens (generous). */
const CONTEXT_SECTION_OVERHEAD_TOKENS = 200;

/** Stored history older than this many messages is never sent to the model. */
const MAX_HISTORY_MESSAGES = 200;
/** A settlement the database refused is tried again after 250 ms, then twice as long each time, up to 5 s apart. */
const SETTLE_RETRY_FIRST_MS = 250;
const SETTLE_RETRY_MAX_MS = 5_000;

/**
 * The one path of every billed model call (chat and Skill runs): validate, claim the idempotency key and
 * reserve quota in one transaction, generate detached from the client, settle in one transaction.
 */
@Injectable()
export class ChatPipelineService implements OnModuleDestroy {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly store: RunStore,
    private readonly conversations: ConversationsRepository,
    private readonly catalog: CatalogCache,
    private readonly providers: ModelProviders,
    private readonly live: LiveStreams,
    private readonly leases: LeaseKeeper,
    private readonly fileContext: FileContextService,
    private readonly stops: RunStops,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
    private readonly metrics: Metrics,
  ) {
    metrics.observeLiveStreams(() => this.running.size);
  }

  /**
   * Starts the turn, or replays / joins the request already made with its key. Resolves once the first
   * byte of the answer is known, so a failure before it is still a problem response.
   */
  async start(
    user: SessionUser,
    turn: ChatTurn,
    request: RunRequest = {},
  ): Promise<ChatStream> {
    let begun: Awaited<ReturnType<ChatPipelineService['begin']>>;
    try {
      begun = await inSpan(
        'chat.start',
        { 'gen_ai.request.model': turn.model },
        async (span) => {
          const result = await this.begin(user, turn, request);
          span.setAttribute('chat.replayed', 'existing' in result);
          if (!('existing' in result))
            span.setAttribute('chat.run_id', result.plan.runId);
          return result;
        },
      );
    } finally {
      request.started?.();
    }
    if ('existing' in begun)
      return this.resume(
        begun.existing,
        turn.fingerprint,
        request.signal,
        turn.fileIds,
      );
    const { plan, writer } = begun;
    turn = begun.turn;
    // Detached from the request: outside its async context (nothing of the request stays reachable from the
    // run), its log lines carry the request id explicitly.
    const requestId = requestContext.getStore()?.requestId;
    this.track(
      requestContext.exit(() => this.run(user, turn, plan, writer, requestId)),
    );
    const contextFiles = plan.files.map((file) => file.id);
    return toChatStream(
      {
        runId: plan.runId,
        model: plan.model.id,
        conversationId: plan.conversationId,
        replayed: false,
        answer: writer.answer,
        contextFiles,
      },
      request.signal,
    );
  }

  /** The start of a run, up to its claim: the request already made with this key, or a new run claimed. */
  private async begin(
    user: SessionUser,
    turn: ChatTurn,
    request: RunRequest,
  ): Promise<
    | { existing: StoredRun }
    | { plan: RunPlan; writer: LiveWriter; turn: ChatTurn }
  > {
    this.assertWithinSizeLimit(turn);
    if (turn.prepareNewRequest || turn.fileIds?.length) {
      // Checks that apply only to new requests run after the key is looked up, so a retry still replays;
      // a retry with files also skips ranking their text again.
      const existing = await this.store.findByKey(user.id, turn.idempotencyKey);
      if (existing) return { existing };
      const prepared = await turn.prepareNewRequest?.();
      if (prepared) turn = { ...turn, ...prepared };
    }
    const plan = await this.planOrReplay(user, turn);
    if ('existing' in plan) return plan;
    const writer = this.live.open(plan.runId);
    let holder: StoredRun | undefined;
    try {
      holder = await this.claim(user, turn, plan, request);
    } catch (error) {
      writer.discard();
      throw error;
    }
    if (!holder) {
      if (plan.files.length > 0) await this.recordAttachedFiles(plan);
      return { plan, writer, turn };
    }
    writer.discard();
    return { existing: holder };
  }

  /**
   * What the run will be; when the request could not be made now (model, plan, provider or conversation
   * refused) but its key holds an earlier request, that one is answered: a retry always replays.
   */
  private async planOrReplay(
    user: SessionUser,
    turn: ChatTurn,
  ): Promise<RunPlan | { existing: StoredRun }> {
    try {
      return await this.plan(user, turn);
    } catch (error) {
      const existing =
        turn.prepareNewRequest || !(error instanceof AppError)
          ? null
          : await this.store.findByKey(user.id, turn.idempotencyKey);
      if (!existing) throw error;
      return { existing };
    }
  }

  /**
   * Waits for detached generations so they settle before the database pool closes: at most half the
   * shutdown budget (the HTTP drain used some already); runs still going after that are left to the sweeper.
   */
  async onModuleDestroy(): Promise<void> {
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise(
      (resolve) =>
        (timer = setTimeout(resolve, this.config.http.shutdownTimeoutMs / 2)),
    );
    await Promise.race([Promise.allSettled([...this.running]), timeout]);
    clearTimeout(timer);
  }

  private assertWithinSizeLimit(turn: ChatTurn): void {
    const characters = turn.messages.reduce(
      (sum, message) => sum + message.content.length,
      turn.system?.length ?? 0,
    );
    if (characters > this.config.chat.maxInputChars) {
      throw new AppError(
        'messages_too_large',
        `The messages hold ${characters} characters; one request may send at most ${this.config.chat.maxInputChars}.`,
      );
    }
  }

  /** A replay names the same files: the fingerprint, which covers fileIds, matched. */
  private resume(
    request: StoredRun,
    fingerprint: string,
    signal?: AbortSignal,
    fileIds?: string[],
  ): Promise<ChatStream> {
    if (request.fingerprint !== fingerprint) {
      throw new AppError(
        'idempotency_key_reused',
        'This idempotencyKey was already used for a different request. Use a new key for a new request.',
      );
    }
    if (request.conversationId === null) {
      throw new AppError(
        'conversation_deleted',
        'The conversation of this request was deleted, and its answer with it. Nothing was billed again; send a new idempotencyKey to ask again.',
      );
    }
    const answer =
      request.status === 'streaming'
        ? this.answerOf(request.id, signal)
        : storedAnswer(request);
    return toChatStream(
      {
        runId: request.id,
        model: request.modelId,
        conversationId: request.conversationId,
        replayed: true,
        answer,
        contextFiles: fileIds,
      },
      signal,
    );
  }

  /** Kept for the conversation's history; a failure here does not stop the answer (it is logged). */
  private async recordAttachedFiles(plan: RunPlan): Promise<void> {
    await this.store
      .recordAttachedFiles(plan.runId, plan.files)
      .catch((error: unknown) =>
        this.log.warn(
          { err: error, runId: plan.runId },
          'attached files not recorded',
        ),
      );
  }

  private async plan(user: SessionUser, turn: ChatTurn): Promise<RunPlan> {
    const model = (await this.catalog.current()).models.get(turn.model);
    if (!model) {
      throw new AppError(
        'unknown_model',
        `There is no model "${turn.model}"; GET /v1/plans lists the models of each plan.`,
        {
          errors: [
            {
              field: 'model',
              code: 'unknown_model',
              message: 'model must be the id of a catalog model',
            },
          ],
        },
      );
    }
    if (!model.planCodes.has(user.planCode))
      throw modelNotAllowed(user, model.id);
    const provider = this.providers.configured(model.provider);
    const history = turn.conversationId
      ? await this.history(user, turn.conversationId, turn.anchor)
      : [];
    const system = turn.system
      ? [{ role: 'system' as const, content: turn.system }]
      : [];
    const context = turn.fileIds?.length
      ? await this.attachedContext(user, turn, model, [
          ...system,
          ...history,
          ...turn.messages,
        ])
      : null;
    const prompt = [
      ...system,
      ...(context
        ? [{ role: 'system' as const, content: context.section }]
        : []),
      ...history,
      ...turn.messages,
    ];
    const estimatedInputTokens = estimateInputTokens(prompt);
    return {
      runId: uuidv7(),
      model,
      provider,
      conversationId: turn.conversationId ?? uuidv7(),
      newConversation: !turn.conversationId,
      prompt,
      files: context?.files ?? [],
      estimatedInputTokens,
      reservedCredits: reservationFor(model, estimatedInputTokens),
      usageDay: utcDay(this.clock.now()),
    };
  }

  /**
   * The attached files' text within what the model's context window leaves after the rest of the prompt
   * and the room kept for the answer; the parts most relevant to the latest user message when not all fits.
   */
  private attachedContext(
    user: SessionUser,
    turn: ChatTurn,
    model: { maxOutputTokens: number; contextWindowTokens: number },
    rest: ChatMessage[],
  ): Promise<FileContext> {
    const freeTokens =
      model.contextWindowTokens -
      model.maxOutputTokens -
      estimateInputTokens(rest) -
      CONTEXT_SECTION_OVERHEAD_TOKENS;
    const question =
      [...turn.messages].reverse().find((message) => message.role === 'user')
        ?.content ?? '';
    return this.fileContext.contextFor(
      user,
      turn.fileIds!,
      question,
      Math.max(0, freeTokens) * BYTES_PER_TOKEN,
    );
  }

  /**
   * The messages of the conversation's branch the model receives (the current one, or the one ending at
   * the anchor): newest first until the character budget is spent.
   */
  private async history(
    user: SessionUser,
    conversationId: string,
    anchor?: { parentId: string | null },
  ): Promise<ChatMessage[]> {
    const conversation = isUuid(conversationId)
      ? await this.conversations.findOwnedBranchMessages(
          user.id,
          conversationId,
          MAX_HISTORY_MESSAGES,
          anchor,
        )
      : null;
    if (!conversation) throw new AppError('not_found', 'No such conversation.');
    let budget = this.config.chat.maxInputChars;
    const kept: ChatMessage[] = [];
    for (const message of conversation.messages) {
      budget -= message.content.length;
      if (budget < 0) break;
      kept.push(message);
    }
    return kept.reverse();
  }

  /**
   * The key answered if already taken, plan access (as stored now), quota reservation and a new
   * conversation, in one statement shared with the claims arriving meanwhile: a refusal leaves the key
   * unused. Answers the request that holds the key when there is one. 503 overloaded when the claim could
   * not be written within the start deadline.
   */
  private async claim(
    user: SessionUser,
    turn: ChatTurn,
    plan: RunPlan,
    request: RunRequest,
  ): Promise<StoredRun | undefined> {
    const now = this.clock.now();
    let claimed: ClaimResult;
    try {
      claimed = await this.store.claim(
        {
          id: plan.runId,
          userId: user.id,
          idempotencyKey: turn.idempotencyKey,
          fingerprint: turn.fingerprint,
          conversationId: plan.conversationId,
          newConversationTitle: plan.newConversation
            ? titleFrom(turn.messages)
            : undefined,
          modelId: plan.model.id,
          ...turn.skill,
          usageDay: plan.usageDay,
          reservedCredits: plan.reservedCredits,
          leaseMs: this.config.chat.leaseMs,
        },
        { deadline: request.startBy, signal: request.signal },
      );
    } catch (error) {
      if (error instanceof NotDispatched)
        throw overloaded(
          `${this.store.waitingClaims} chats are waiting to start.`,
        );
      throw error;
    }
    switch (claimed.outcome) {
      case 'claimed':
        return undefined;
      case 'taken':
        return claimed.request;
      case 'quota_exceeded':
        this.metrics.quotaRefused(user.planCode);
        throw this.quotaExceeded(plan, now);
      case 'model_not_allowed':
        // The plan changed since this instance read it; the database's answer is the one that counts.
        throw modelNotAllowed(user, plan.model.id);
      case 'not_found':
        throw new AppError('not_found', 'No such conversation.');
    }
  }

  private quotaExceeded(plan: RunPlan, now: Date): AppError {
    const resetsAt = nextUtcMidnight(now);
    const seconds = Math.max(
      1,
      Math.ceil((resetsAt.getTime() - now.getTime()) / 1000),
    );
    return new AppError(
      'quota_exceeded',
      `This request may cost up to ${plan.reservedCredits} credits, more than ` +
        `remain of today's quota (GET /v1/billing/quota). The quota resets at ${resetsAt.toISOString()}.`,
      {
        headers: { 'Retry-After': String(seconds) },
        extensions: { resetsAt: resetsAt.toISOString() },
      },
    );
  }

  private track(run: Promise<void>): void {
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /** Detached from the client: generation goes on after a disconnect, so the answer is stored and billed. */
  private run(
    user: SessionUser,
    turn: ChatTurn,
    plan: RunPlan,
    writer: LiveWriter,
    requestId?: string,
  ): Promise<void> {
    const attributes = {
      'chat.run_id': plan.runId,
      'gen_ai.system': plan.provider.name,
      'gen_ai.request.model': plan.model.upstreamModel,
      'chat.model': plan.model.id,
    };
    return inSpan('chat.run', attributes, (span) =>
      this.generateAndSettle(user, turn, plan, writer, span, requestId),
    );
  }

  private async generateAndSettle(
    user: SessionUser,
    turn: ChatTurn,
    plan: RunPlan,
    writer: LiveWriter,
    span: Span,
    requestId?: string,
  ): Promise<void> {
    this.leases.hold(plan.runId);
    const stop = this.stops.register(plan.runId);
    let outcome: RunOutcome;
    const firstToken = this.metrics.firstTokenTimer(
      plan.provider.name,
      plan.model.id,
    );
    try {
      const generation = await inSpan(
        'chat.generate',
        {
          'gen_ai.system': plan.provider.name,
          'gen_ai.request.model': plan.model.upstreamModel,
        },
        async (generating) => {
          let waitingForFirstToken = true;
          const generated = await generate(
            plan.provider,
            {
              upstreamModel: plan.model.upstreamModel,
              messages: plan.prompt,
              maxOutputTokens: plan.model.maxOutputTokens,
            },
            {
              timeoutMs: this.config.chat.providerTimeoutMs,
              onText: (text) => {
                firstToken();
                if (waitingForFirstToken) generating.addEvent('first token');
                waitingForFirstToken = false;
                writer.append(text);
              },
              stop,
            },
          );
          if (generated.failure)
            generating.setStatus({
              code: SpanStatusCode.ERROR,
              message: generated.failure,
            });
          return generated;
        },
      );
      if (generation.failure)
        this.log.warn(
          {
            requestId,
            runId: plan.runId,
            model: plan.model.id,
            failure: generation.failure,
            reason: generation.failureReason,
          },
          'model provider failed',
        );
      outcome = generation.failure
        ? { status: 'failed', errorCode: generation.failure }
        : { status: generation.stopped ? 'stopped' : 'completed' };
      const settlement = this.settlementOf(turn, plan, generation, outcome);
      const settled = await inSpan(
        'chat.settle',
        { 'chat.billed': settlement.billed },
        () => this.settleThroughOutage(user, settlement, requestId),
      );
      if (settled) outcome.usage = usageOf(settlement);
      if (!settled) {
        // Swept meanwhile (this instance had lost the database for longer than the lease): what the
        // client received is kept, so a retry replays it with the failure instead of claiming none.
        outcome = { status: 'failed', errorCode: 'generation_interrupted' };
        if (generation.text) {
          await this.store
            .keepInterruptedText(plan.runId, generation.text)
            .catch((error: unknown) =>
              this.log.warn(
                { err: error, requestId, runId: plan.runId },
                'interrupted text not kept',
              ),
            );
        }
      }
    } catch (error) {
      // Settlement failed (database down): the lease runs out and the sweeper releases the reservation.
      this.log.error(
        { err: error, requestId, runId: plan.runId },
        'chat settlement failed',
      );
      outcome = { status: 'failed', errorCode: 'generation_interrupted' };
    } finally {
      this.leases.release(plan.runId);
      this.stops.release(plan.runId);
    }
    this.metrics.runFinished(plan.model.id, outcome);
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
    await writer.end(outcome);
  }

  /**
   * The settlement, tried again while the database is unreachable, for up to one lease: the lease is still
   * held (renewed as soon as the database is back), so a short outage loses nothing. False if swept.
   */
  private async settleThroughOutage(
    user: SessionUser,
    settlement: Settlement,
    requestId?: string,
  ): Promise<boolean> {
    const giveUpAt = Date.now() + this.config.chat.leaseMs;
    for (
      let delayMs = SETTLE_RETRY_FIRST_MS;
      ;
      delayMs = Math.min(delayMs * 2, SETTLE_RETRY_MAX_MS)
    ) {
      try {
        return await this.store.settle(user.id, settlement);
      } catch (error) {
        if (!isDatabaseUnavailable(error) || Date.now() + delayMs > giveUpAt)
          throw error;
        this.log.warn(
          { err: error, requestId, runId: settlement.id, retryInMs: delayMs },
          'chat settlement failed: trying again',
        );
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }

  /**
   * How the run is settled (messages, ledger entry and quota in one statement): billed when it completed or
   * produced text (a stopped or broken-off answer pays for what was produced).
   */
  private settlementOf(
    turn: ChatTurn,
    plan: RunPlan,
    generation: Generation,
    outcome: RunOutcome,
  ): Settlement {
    const billed = outcome.status === 'completed' || generation.text.length > 0;
    const inputTokens =
      generation.usage?.inputTokens ?? plan.estimatedInputTokens;
    const outputTokens = generation.usage?.outputTokens ?? generation.chunks;
    return {
      id: plan.runId,
      status: outcome.status,
      responseBody: generation.text,
      errorCode: outcome.status === 'failed' ? outcome.errorCode : null,
      finishedAt: this.clock.now(),
      billed,
      messages: [
        ...turn.messages,
        { role: 'assistant', content: generation.text },
      ],
      anchor: turn.anchor,
      modelId: plan.model.id,
      skill: turn.skill,
      inputTokens,
      outputTokens,
      credits: billed
        ? settledCredits(
            plan.model,
            plan.reservedCredits,
            inputTokens,
            outputTokens,
          )
        : 0,
    };
  }

  /** A running answer from its first byte: the run's own buffer when it runs here, else relayed from elsewhere. */
  private answerOf(runId: string, signal?: AbortSignal): LiveBuffer {
    const local = this.live.localAnswer(runId);
    if (local) return local;
    const answer = new LiveBuffer();
    void this.relayInto(answer, this.followElsewhere(runId, signal));
    return answer;
  }

  private async relayInto(
    answer: LiveBuffer,
    events: AsyncIterable<LiveEvent>,
  ): Promise<void> {
    try {
      for await (const event of events) {
        if (event.type === 'text') answer.append(event.text);
        else if (event.type === 'end') answer.end(event.outcome);
      }
    } catch (error) {
      this.log.warn(
        { err: error },
        'following a run of another instance failed',
      );
      answer.end({ status: 'failed', errorCode: 'generation_interrupted' });
    }
  }

  /**
   * A run of another instance, from its first byte. That instance may end the run where this process
   * cannot hear it (it crashed and was swept, the relay lost a chunk): while the relay is quiet the
   * database is asked, less and less often, and a finished run is completed from the stored body.
   */
  private async *followElsewhere(
    runId: string,
    signal?: AbortSignal,
  ): AsyncGenerator<LiveEvent> {
    let delivered = 0;
    let quietSeconds = 0;
    let nextCheck = 1;
    for await (const event of this.live.followElsewhere(runId, signal)) {
      if (event.type === 'idle') {
        quietSeconds += 1;
        if (quietSeconds < nextCheck) continue;
        nextCheck =
          quietSeconds + Math.min(quietSeconds, MAX_SECONDS_BETWEEN_CHECKS);
        const stored = await this.store
          .findOutcome(runId)
          .catch((error: unknown) => {
            this.log.warn(
              { err: error, runId },
              'could not read a followed run',
            );
            return 'unknown' as const;
          });
        if (stored === 'unknown' || stored?.status === 'streaming') continue;
        const rest = (stored?.responseBody ?? '').slice(delivered);
        if (rest) yield { type: 'text', text: rest };
        yield {
          type: 'end',
          outcome: stored
            ? outcomeOf(stored)
            : { status: 'failed', errorCode: 'generation_interrupted' },
        };
        return;
      }
      quietSeconds = 0;
      nextCheck = 1;
      if (event.type === 'text') delivered += event.text.length;
      yield event;
      if (event.type === 'end') return;
    }
  }
}

/** What a settled run reports: its ledger entry's figures, or zeros when nothing was billed. */
function usageOf(settlement: Settlement): RunUsage {
  return settlement.billed
    ? {
        inputTokens: settlement.inputTokens,
        outputTokens: settlement.outputTokens,
        credits: settlement.credits,
      }
    : NO_USAGE;
}

const NO_USAGE: RunUsage = { inputTokens: 0, outputTokens: 0, credits: 0 };

/** A finished request replayed: its stored text, then how it ended. */
function storedAnswer(request: StoredRun): LiveBuffer {
  const answer = new LiveBuffer();
  if (request.responseBody) answer.append(request.responseBody);
  answer.end(outcomeOf(request));
  return answer;
}

function outcomeOf(request: StoredRun): RunOutcome {
  const usage = request.usage ?? NO_USAGE;
  if (request.status === 'completed' || request.status === 'stopped')
    return { status: request.status, usage };
  return {
    status: 'failed',
    errorCode: isFailureCode(request.errorCode)
      ? request.errorCode
      : 'generation_interrupted',
    usage,
  };
}

function modelNotAllowed(user: SessionUser, modelId: string): AppError {
  return new AppError(
    'model_not_allowed',
    `Your plan (${user.planCode}) does not include ${modelId}.`,
  );
}
