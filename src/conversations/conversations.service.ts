import { Inject, Injectable } from '@nestjs/common';
import { Prisma } from '../infra/prisma/generated/client';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import {
  FeedbackRow,
  toFeedbackDto,
} from '../feedback/dto/message-feedback.dto';
import { toShareDto } from '../shares/dto/share.response';
import { toolCallsOf } from '../tools/dto/tool-call.dto';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import {
  decodeCursor,
  decodeOffsetCursor,
  DEFAULT_PAGE_SIZE,
  encodeOffsetCursor,
  toPage,
} from '../common/pagination';
import {
  ConversationListQueryDto,
  UpdateConversationDto,
} from './dto/conversation-query.dto';
import {
  AttachedFileDto,
  ConversationDto,
  ConversationMessageDto,
  ConversationPageDto,
  ConversationSummaryDto,
  MessageUsageDto,
} from './dto/conversation.response';
import {
  ConversationSummaryRow,
  ConversationsRepository,
} from './conversations.repository';
import { currentBranch } from './conversation-branch';
import { readCopiedMessage } from './copied-message';

@Injectable()
export class ConversationsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly conversations: ConversationsRepository,
  ) {}

  /** Newest activity first; with `q`, best matches first (pages by position in the ranking). */
  async list(
    user: SessionUser,
    query: ConversationListQueryDto,
  ): Promise<ConversationPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const archived = query.archived ?? false;
    if (query.q !== undefined) {
      const offset = query.cursor ? decodeOffsetCursor(query.cursor) : 0;
      const rows = await this.conversations.searchOfOwner(
        user.id,
        query.q,
        archived,
        limit,
        offset,
      );
      return {
        data: rows.slice(0, limit).map(toSummary),
        nextCursor:
          rows.length > limit ? encodeOffsetCursor(offset + limit) : null,
      };
    }
    const rows = await this.conversations.findPageOfOwner(
      user.id,
      archived,
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.updatedAt, id: row.id }),
      toSummary,
    );
  }

  /** Another user's conversation and an unknown (or malformed) id get the same 404. */
  async get(user: SessionUser, id: string): Promise<ConversationDto> {
    const row = isUuid(id)
      ? await this.conversations.findOwnedWithMessages(user.id, id)
      : null;
    if (!row) throw notFound();
    const branch = currentBranch(row.messages, row.currentMessageId);
    return {
      ...toSummary(row),
      currentMessageId: branch.at(-1)?.message.id ?? null,
      share: row.share ? toShareDto(row.share, this.config.appUrl) : null,
      messages: withAttachedFiles(
        branch.map(({ message, alternatives }) => ({
          ...message,
          alternatives,
        })),
      ),
    };
  }

  /** Renames, archives or restores, or switches branch; answers the conversation as GET does. */
  async update(
    user: SessionUser,
    id: string,
    changes: UpdateConversationDto,
  ): Promise<ConversationDto> {
    const { title, archived, currentMessageId } = changes;
    if (title == null && archived == null && currentMessageId == null) {
      throw new AppError(
        'validation_failed',
        'Send at least one of title, archived and currentMessageId.',
        {
          errors: [
            {
              field: 'title',
              code: 'required',
              message:
                'one of title, archived and currentMessageId is required',
            },
          ],
        },
      );
    }
    const updated = isUuid(id)
      ? await this.conversations.updateOwned(user.id, id, {
          title: title ?? undefined,
          archived: archived ?? undefined,
          currentMessageId: currentMessageId?.toLowerCase(),
        })
      : null;
    if (!updated) {
      if (
        currentMessageId != null &&
        isUuid(id) &&
        (await this.conversations.isOwned(user.id, id))
      ) {
        throw new AppError(
          'not_found',
          'This conversation has no such message.',
          {
            errors: [
              {
                field: 'currentMessageId',
                code: 'not_found',
                message:
                  'currentMessageId must be a message of this conversation',
              },
            ],
          },
        );
      }
      throw notFound();
    }
    return this.get(user, id);
  }
}

function notFound(): AppError {
  return new AppError('not_found', 'No such conversation.');
}

type StoredMessage = {
  id: string;
  parentId: string | null;
  role: ConversationMessageDto['role'];
  content: string;
  createdAt: Date;
  chatRequestId: string | null;
  alternatives: string[];
  copiedFrom: Prisma.JsonValue;
  feedback: FeedbackRow | null;
  chatRequest: {
    files: { fileId: string; name: string; kind: AttachedFileDto['kind'] }[];
    modelId: string;
    answeredModelId: string | null;
    ledgerEntry: {
      inputTokens: number;
      cachedInputTokens: number;
      outputTokens: number;
      credits: number;
      modelId: string | null;
      requestedModelId: string | null;
    } | null;
    toolExecutions: Parameters<typeof toolCallsOf>[1] & object;
  } | null;
};

/** A run's attached files go on its last user message (the turn's question); its usage on its answer. */
function withAttachedFiles(
  messages: StoredMessage[],
): ConversationMessageDto[] {
  const lastUserOfRun = new Map<string, string>();
  for (const message of messages)
    if (message.role === 'user' && message.chatRequestId)
      lastUserOfRun.set(message.chatRequestId, message.id);
  return messages.map((message) => {
    const copied = message.chatRequest
      ? null
      : readCopiedMessage(message.copiedFrom);
    const answer = message.role === 'assistant';
    return {
      id: message.id,
      parentId: message.parentId,
      role: message.role,
      content: message.content,
      createdAt: message.createdAt.toISOString(),
      files:
        message.chatRequestId &&
        lastUserOfRun.get(message.chatRequestId) === message.id
          ? (message.chatRequest?.files ?? []).map((file) => ({
              id: file.fileId,
              name: file.name,
              kind: file.kind,
            }))
          : [],
      alternatives: message.alternatives,
      usage: answer ? usageOf(message.chatRequest) : null,
      model: answer
        ? (modelOf(message.chatRequest) ?? copied?.model ?? null)
        : null,
      toolCalls: copied
        ? copied.toolCalls
        : toolCallsOf(message.role, message.chatRequest?.toolExecutions),
      feedback:
        answer && message.feedback ? toFeedbackDto(message.feedback) : null,
    };
  });
}

/** The model that answered a run: the one billed, else the one a fallback moved to, else the one asked for. */
function modelOf(run: StoredMessage['chatRequest']): string | null {
  if (!run) return null;
  return run.ledgerEntry?.modelId ?? run.answeredModelId ?? run.modelId;
}

/** What the run that wrote an answer cost, from its ledger entry; null while it has none. */
function usageOf(run: StoredMessage['chatRequest']): MessageUsageDto | null {
  const entry = run?.ledgerEntry;
  if (!run || !entry) return null;
  return {
    inputTokens: entry.inputTokens,
    cachedInputTokens: entry.cachedInputTokens,
    outputTokens: entry.outputTokens,
    credits: entry.credits,
    // A run's entry always names the model it billed; the column is nullable only for grants.
    model: entry.modelId ?? run.modelId,
    requestedModel: entry.requestedModelId,
  };
}

function toSummary(row: ConversationSummaryRow): ConversationSummaryDto {
  return {
    id: row.id,
    title: row.title,
    skillId: row.skillId,
    skillVersionId: row.skillVersionId,
    archived: row.archivedAt !== null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
