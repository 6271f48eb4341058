import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import {
  ActiveModel,
  CatalogCache,
  CatalogSnapshot,
} from '../../catalog/catalog-cache';
import { Clock } from '../../common/clock';
import { AppError } from '../../common/errors/app-error';
import { isUuid, uuidv7 } from '../../common/ids';
import { utcDay } from '../../common/utc-day';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import {
  BranchMessage,
  ConversationsRepository,
} from '../../conversations/conversations.repository';
import { ToolsService } from '../../tools/tools.service';
import { ToolBinding } from '../../tools/run/tool-binding';
import { toModelMessages } from './tool-history';
import {
  FileContext,
  FileContextService,
} from '../../files/context/file-context.service';
import { ProviderEndpoints } from '../../models/provider-endpoints';
import { ChatMessage } from '../../models/providers/model-provider';
import {
  BYTES_PER_TOKEN,
  estimateInputTokens,
  reservationFor,
} from '../pricing';
import { ChatTurn, payingCaller, RunModel, RunPlan } from './chat-turn';
import { modelNotAllowed, unknownModel } from './refusals';

/** The section's own words and each file's delimiters, in tokens (generous). */
const CONTEXT_SECTION_OVERHEAD_TOKENS = 200;
/** Stored history older than this many messages is never sent to the model. */
const MAX_HISTORY_MESSAGES = 200;

/**
 * Planning a run: which model (known, and in the caller's plan), its provider, what the model receives
 * (system, attached files' text, the conversation's branch, the new messages) and what it may cost at most.
 * Reads only; nothing is claimed or billed here.
 */
@Injectable()
export class RunPlanner {
  constructor(
    private readonly catalog: CatalogCache,
    private readonly endpoints: ProviderEndpoints,
    private readonly conversations: ConversationsRepository,
    private readonly fileContext: FileContextService,
    private readonly tools: ToolsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** 413 for a turn over CHAT_MAX_INPUT_CHARS, before anything is looked up. */
  assertWithinSizeLimit(turn: ChatTurn): void {
    const characters = turn.messages.reduce(
      (sum, message) => sum + message.content.length,
      turn.system?.length ?? 0,
    );
    const limit = this.config.chat.maxInputChars;
    if (characters > limit)
      throw new AppError(
        'messages_too_large',
        `The messages hold ${characters} characters; one request may send at most ${limit}.`,
      );
  }

  async plan(user: SessionUser, turn: ChatTurn): Promise<RunPlan> {
    const caller = payingCaller(user, turn.payer);
    const catalog = await this.catalog.current();
    const model = this.modelFor(catalog, caller, turn);
    const tools = turn.tools?.length
      ? new ToolBinding(
          // A pooled run gets the tools of the organization's plan.
          await this.tools.usableOrRefuse(caller, turn.tools, 'tools'),
        )
      : undefined;
    // 503 before anything is claimed when this instance cannot call the model asked for.
    this.endpoints.configured(model.endpoint);
    const history = turn.conversationId
      ? toModelMessages(
          await this.history(user, turn.conversationId, turn.anchor),
          // Native tool messages only when the run offers tools (see tool-history.ts).
          tools ? (toolId) => tools.wireNameFor(toolId) : null,
        )
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
    const section = context
      ? [{ role: 'system' as const, content: context.section }]
      : [];
    const prompt = [...system, ...section, ...history, ...turn.messages];
    const estimatedInputTokens = estimateInputTokens(prompt);
    return {
      runId: uuidv7(),
      model: runModelOf(model),
      fallbacks: this.fallbacksOf(catalog, model, caller.planCode),
      conversationId: turn.conversationId ?? uuidv7(),
      newConversation: !turn.conversationId,
      prompt,
      // The Skill's instruction, the files and the history stay the same from one turn to the next.
      cacheablePrefix: system.length + section.length + history.length,
      tools,
      files: context?.files ?? [],
      estimatedInputTokens,
      reservedCredits: reservationFor(model, estimatedInputTokens),
      usageDay: utcDay(this.clock.now()),
      organizationId: turn.payer?.organizationId,
      planCode: caller.planCode,
    };
  }

  /**
   * The model's fallbacks a run may use: active, in the paying plan, and reachable from this instance
   * (an endpoint not configured here is no fallback). docs/adr/0063-providers-and-routing.md
   */
  private fallbacksOf(
    catalog: CatalogSnapshot,
    model: ActiveModel,
    planCode: string,
  ): RunModel[] {
    return model.fallbacks.flatMap((id) => {
      const fallback = catalog.models.get(id);
      return fallback &&
        fallback.planCodes.has(planCode) &&
        this.endpoints.find(fallback.endpoint)
        ? [runModelOf(fallback)]
        : [];
    });
  }

  /** The model, known and in the paying plan (the organization's, for a run its pool pays). */
  private modelFor(
    catalog: CatalogSnapshot,
    caller: SessionUser,
    turn: ChatTurn,
  ): ActiveModel {
    const model = catalog.models.get(turn.model);
    if (!model) throw unknownModel(turn.model);
    if (!model.planCodes.has(caller.planCode))
      throw modelNotAllowed(model.id, {
        planCode: caller.planCode,
        organizationId: turn.payer?.organizationId,
      });
    return model;
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
      turn.fileIds ?? [],
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
  ): Promise<BranchMessage[]> {
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
    const kept: BranchMessage[] = [];
    for (const message of conversation.messages) {
      budget -=
        message.content.length +
        (message.toolCalls ?? []).reduce(
          (sum, call) =>
            sum +
            (call.content?.length ?? 0) +
            JSON.stringify(call.arguments).length,
          0,
        );
      if (budget < 0) break;
      kept.push(message);
    }
    return kept.reverse();
  }
}

/** A catalog model as a run needs it. */
function runModelOf(model: ActiveModel): RunModel {
  return {
    id: model.id,
    upstreamModel: model.upstreamModel,
    endpoint: model.endpoint,
    creditsPerRequest: model.creditsPerRequest,
    creditsPer1kInput: model.creditsPer1kInput,
    creditsPer1kOutput: model.creditsPer1kOutput,
    creditsPer1kCachedInput: model.creditsPer1kCachedInput,
    maxOutputTokens: model.maxOutputTokens,
  };
}
