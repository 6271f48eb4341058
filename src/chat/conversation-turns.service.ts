import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import {
  ConversationsRepository,
  TurnOrigin,
} from '../conversations/conversations.repository';
import { RunRequest } from './admission/chat-admission';
import { ChatPipelineService } from './chat-pipeline.service';
import { ChatTurn, OrgPayer, TurnCompletion } from './run/chat-turn';
import { OrgAccess } from '../orgs/org-access';
import { ChatStream } from './chat-stream';
import { EditMessageDto, RegenerateDto } from './dto/conversation-turn.dto';
import { fingerprintOf } from './fingerprint';
import { RunStops } from './stop/run-stops';

/**
 * What happens to a conversation through the chat pipeline: a new answer to its last question
 * (regenerate), a user message replaced from that point on (edit), each as a new branch that becomes the
 * current one; and its deletion, which stops its live runs.
 * docs/adr/0036-conversation-branches.md
 */
@Injectable()
export class ConversationTurnsService {
  constructor(
    private readonly pipeline: ChatPipelineService,
    private readonly conversations: ConversationsRepository,
    private readonly stops: RunStops,
    private readonly orgs: OrgAccess,
  ) {}

  /** A new answer to the current branch's last user message, after it as an alternative to the earlier ones. */
  regenerate(
    user: SessionUser,
    conversationId: string,
    request: RegenerateDto,
    runRequest: RunRequest = {},
  ): Promise<ChatStream> {
    return this.pipeline.start(
      user,
      {
        ...this.turnBasics(conversationId, request),
        fingerprint: fingerprintOf({
          kind: 'regenerate',
          conversationId,
          model: request.model ?? null,
          tools: request.tools,
          organizationId: request.organizationId,
        }),
        messages: [],
        prepareNewRequest: async () => {
          const question = isUuid(conversationId)
            ? await this.conversations.findLastUserMessageOfBranch(
                user.id,
                conversationId,
              )
            : null;
          if (!question) {
            if (
              isUuid(conversationId) &&
              (await this.conversations.isOwned(user.id, conversationId))
            ) {
              throw new AppError(
                'nothing_to_regenerate',
                'The current branch of this conversation has no user message to answer again.',
              );
            }
            throw conversationNotFound();
          }
          return {
            ...fromOrigin(question, request.model),
            anchor: { parentId: question.id },
            payer: await this.payerOf(user, request),
          };
        },
      },
      runRequest,
    );
  }

  /** The user message replaced by `content` (a new branch from its parent), and a new answer to it. */
  edit(
    user: SessionUser,
    conversationId: string,
    messageId: string,
    request: EditMessageDto,
    runRequest: RunRequest = {},
  ): Promise<ChatStream> {
    const content = request.content;
    return this.pipeline.start(
      user,
      {
        ...this.turnBasics(conversationId, request),
        fingerprint: fingerprintOf({
          kind: 'edit',
          conversationId,
          messageId: messageId.toLowerCase(),
          content,
          model: request.model ?? null,
          tools: request.tools,
          organizationId: request.organizationId,
        }),
        messages: [{ role: 'user', content }],
        prepareNewRequest: async () => {
          const edited =
            isUuid(conversationId) && isUuid(messageId)
              ? await this.conversations.findOwnedMessage(
                  user.id,
                  conversationId,
                  messageId.toLowerCase(),
                )
              : null;
          if (!edited) {
            if (
              isUuid(conversationId) &&
              (await this.conversations.isOwned(user.id, conversationId))
            )
              throw new AppError(
                'not_found',
                'This conversation has no such message.',
              );
            throw conversationNotFound();
          }
          if (edited.role !== 'user') {
            throw new AppError(
              'validation_failed',
              `Message ${edited.id} is an ${edited.role} message; only user messages can be edited (regenerate answers again).`,
              {
                errors: [
                  {
                    field: 'messageId',
                    code: 'not_a_user_message',
                    message: 'messageId must be a user message',
                  },
                ],
              },
            );
          }
          return {
            ...fromOrigin(edited, request.model),
            anchor: { parentId: edited.parentId },
            payer: await this.payerOf(user, request),
          };
        },
      },
      runRequest,
    );
  }

  /** 404 unless the caller's; its runs still live are stopped (they bill what they produced). */
  async delete(user: SessionUser, conversationId: string): Promise<void> {
    const liveRuns = isUuid(conversationId)
      ? await this.conversations.deleteOwned(user.id, conversationId)
      : null;
    if (liveRuns === null) throw conversationNotFound();
    await this.stops.stop(liveRuns);
  }

  /** The organization whose pool pays, when the request names one (docs/adr/0062-organizations.md). */
  private async payerOf(
    user: SessionUser,
    request: RegenerateDto,
  ): Promise<OrgPayer | undefined> {
    return request.organizationId
      ? this.orgs.payer(user, request.organizationId)
      : undefined;
  }

  /** The parts of the turn known before the key is looked up; the model is completed by `prepareNewRequest`. */
  private turnBasics(
    conversationId: string,
    request: RegenerateDto,
  ): Pick<ChatTurn, 'model' | 'idempotencyKey' | 'conversationId' | 'tools'> {
    return {
      model: request.model ?? '',
      idempotencyKey: request.idempotencyKey,
      conversationId,
      tools: request.tools,
    };
  }
}

/** The model (the one asked for, else the one that ran before), the Skill instruction and the files of the run that stored `origin`. */
function fromOrigin(
  origin: TurnOrigin,
  model: string | undefined,
): TurnCompletion {
  const chosen = model ?? origin.modelId;
  if (!chosen) {
    throw new AppError('validation_failed', 'Name the model to answer with.', {
      errors: [
        { field: 'model', code: 'required', message: 'model is required here' },
      ],
    });
  }
  return {
    model: chosen,
    ...(origin.instruction !== null ? { system: origin.instruction } : {}),
    ...(origin.skillId && origin.skillVersionId
      ? {
          skill: {
            skillId: origin.skillId,
            skillVersionId: origin.skillVersionId,
          },
        }
      : {}),
    ...(origin.fileIds.length > 0 ? { fileIds: origin.fileIds } : {}),
  };
}

function conversationNotFound(): AppError {
  return new AppError('not_found', 'No such conversation.');
}
