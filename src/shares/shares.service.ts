import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid, uuidv7 } from '../common/ids';
import {
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  PageQueryDto,
  toPage,
} from '../common/pagination';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ConversationsRepository } from '../conversations/conversations.repository';
import { ConversationsService } from '../conversations/conversations.service';
import { CopiedMessage } from '../conversations/copied-message';
import { ConversationDto } from '../conversations/dto/conversation.response';
import { SharePageDto, ShareDto, toShareDto } from './dto/share.response';
import { SharedConversationDto } from './dto/shared-conversation.response';
import { isShareId, newShareId } from './share-id';
import { ForkedMessage, SharesRepository } from './shares.repository';
import { readSnapshot, snapshotOf } from './snapshot';

/** Read-only links to conversations, and forks of them. docs/adr/0064-share-links-and-feedback.md */
@Injectable()
export class SharesService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly shares: SharesRepository,
    private readonly conversations: ConversationsService,
    private readonly conversationRows: ConversationsRepository,
  ) {}

  /** A snapshot of the conversation's current branch now; replaces any earlier link (its id too). */
  async share(user: SessionUser, conversationId: string): Promise<ShareDto> {
    const conversation = await this.conversations.get(user, conversationId);
    if (conversation.messages.length === 0)
      throw new AppError(
        'conflict',
        'This conversation has no message yet: there is nothing to share.',
      );
    const snapshot = snapshotOf(conversation.messages);
    const row = await this.shares.replaceOwned(user.id, conversation.id, {
      id: newShareId(),
      title: conversation.title,
      snapshot,
      messageCount: snapshot.messages.length,
    });
    if (!row) throw conversationNotFound();
    return toShareDto(row, this.config.appUrl);
  }

  /** Revokes the conversation's link, if it has one; 404 only when the conversation is not the caller's. */
  async unshare(user: SessionUser, conversationId: string): Promise<void> {
    if (!isUuid(conversationId)) throw conversationNotFound();
    const deleted = await this.shares.deleteOfOwnedConversation(
      user.id,
      conversationId,
    );
    if (
      !deleted &&
      !(await this.conversationRows.isOwned(user.id, conversationId))
    )
      throw conversationNotFound();
  }

  async list(user: SessionUser, query: PageQueryDto): Promise<SharePageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.shares.findPageOfOwner(
      user.id,
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.createdAt, id: row.conversationId }),
      (row) => toShareDto(row, this.config.appUrl),
    );
  }

  /** The snapshot, to anyone holding the link; read from the database every time, so a revocation holds at once. */
  async read(shareId: string): Promise<SharedConversationDto> {
    const row = isShareId(shareId)
      ? await this.shares.findSnapshot(shareId)
      : null;
    if (!row) throw shareNotFound();
    return {
      shareId: row.id,
      title: row.title,
      createdAt: row.createdAt.toISOString(),
      messages: readSnapshot(row.snapshot).messages,
    };
  }

  /** A new conversation of the caller holding the snapshot's messages, ready to go on with. */
  async fork(user: SessionUser, shareId: string): Promise<ConversationDto> {
    const shared = await this.read(shareId);
    let parentId: string | null = null;
    const messages: ForkedMessage[] = shared.messages.map((message) => {
      const id = uuidv7();
      const copied: CopiedMessage | undefined =
        message.role === 'assistant'
          ? {
              model: message.model,
              toolCalls: message.toolCalls.map((call) => ({
                id: uuidv7(),
                ...call,
                content: '',
              })),
            }
          : undefined;
      const forked: ForkedMessage = {
        id,
        parentId,
        role: message.role,
        content: message.content,
        copiedFrom: copied ?? null,
      };
      parentId = id;
      return forked;
    });
    const id = uuidv7();
    await this.shares.createConversationFrom(
      user.id,
      { id, title: shared.title },
      messages,
    );
    return this.conversations.get(user, id);
  }
}

function conversationNotFound(): AppError {
  return new AppError('not_found', 'No such conversation.');
}

function shareNotFound(): AppError {
  return new AppError(
    'not_found',
    'No such shared conversation: the link was removed or never existed.',
  );
}
