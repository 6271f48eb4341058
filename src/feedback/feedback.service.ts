import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { ConversationsRepository } from '../conversations/conversations.repository';
import { PutFeedbackDto } from './dto/feedback.input';
import { MessageFeedbackDto, toFeedbackDto } from './dto/message-feedback.dto';
import { FeedbackRepository } from './feedback.repository';

/** Ratings of answers by the person who asked. docs/adr/0064-share-links-and-feedback.md */
@Injectable()
export class FeedbackService {
  constructor(
    private readonly feedback: FeedbackRepository,
    private readonly conversations: ConversationsRepository,
  ) {}

  /** Rates an answer of the caller's, replacing an earlier rating whole. */
  async rate(
    user: SessionUser,
    conversationId: string,
    messageId: string,
    input: PutFeedbackDto,
  ): Promise<MessageFeedbackDto> {
    const row =
      isUuid(conversationId) && isUuid(messageId)
        ? await this.feedback.upsertOnOwnedAnswer(
            user.id,
            conversationId,
            messageId,
            {
              rating: input.rating,
              tags: [...new Set(input.tags ?? [])],
              comment: input.comment ? input.comment : null,
            },
          )
        : null;
    if (row) return toFeedbackDto(row);
    throw await this.whyNotRated(user, conversationId, messageId);
  }

  /** Removes the caller's rating of a message of theirs (nothing to remove is no error). */
  async unrate(
    user: SessionUser,
    conversationId: string,
    messageId: string,
  ): Promise<void> {
    if (!isUuid(conversationId) || !isUuid(messageId)) throw messageNotFound();
    const deleted = await this.feedback.deleteOnOwnedMessage(
      user.id,
      conversationId,
      messageId,
    );
    if (
      !deleted &&
      !(await this.conversations.findOwnedMessage(
        user.id,
        conversationId,
        messageId,
      ))
    )
      throw messageNotFound();
  }

  /** Read only when a rating was refused: a message of theirs that is not an answer, else none of theirs. */
  private async whyNotRated(
    user: SessionUser,
    conversationId: string,
    messageId: string,
  ): Promise<AppError> {
    const message =
      isUuid(conversationId) && isUuid(messageId)
        ? await this.conversations.findOwnedMessage(
            user.id,
            conversationId,
            messageId,
          )
        : null;
    if (!message) return messageNotFound();
    const detail = `Only answers are rated; this is a ${message.role} message.`;
    return new AppError('validation_failed', detail, {
      errors: [
        {
          field: 'messageId',
          code: 'not_an_answer',
          message: 'messageId must be an assistant message',
        },
      ],
    });
  }
}

function messageNotFound(): AppError {
  return new AppError('not_found', 'No such message in your conversations.');
}
