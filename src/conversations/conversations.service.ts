import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { decodeCursor, DEFAULT_PAGE_SIZE, PageQueryDto, toPage } from '../common/pagination';
import { AttachedFileDto, ConversationDto, ConversationPageDto, ConversationSummaryDto, MessageDto } from './dto/conversation.response';
import { ConversationsRepository } from './conversations.repository';

@Injectable()
export class ConversationsService {
  constructor(private readonly conversations: ConversationsRepository) {}

  async list(user: SessionUser, query: PageQueryDto): Promise<ConversationPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.conversations.findPageOfOwner(user.id, limit, query.cursor ? decodeCursor(query.cursor) : undefined);
    return toPage(rows, limit, (row) => ({ at: row.updatedAt, id: row.id }), toSummary);
  }

  /** Another user's conversation and an unknown (or malformed) id get the same 404. */
  async get(user: SessionUser, id: string): Promise<ConversationDto> {
    const row = isUuid(id) ? await this.conversations.findOwnedWithMessages(user.id, id) : null;
    if (!row) throw new AppError('not_found', 'No such conversation.');
    return {
      ...toSummary(row),
      messages: withAttachedFiles(row.messages),
    };
  }
}

type StoredMessage = {
  id: string;
  role: MessageDto['role'];
  content: string;
  createdAt: Date;
  chatRequestId: string | null;
  chatRequest: { files: { fileId: string; name: string; kind: AttachedFileDto['kind'] }[] } | null;
};

/** A run's attached files go on its last user message (the turn's question). */
function withAttachedFiles(messages: StoredMessage[]): MessageDto[] {
  const lastUserOfRun = new Map<string, string>();
  for (const message of messages) if (message.role === 'user' && message.chatRequestId) lastUserOfRun.set(message.chatRequestId, message.id);
  return messages.map((message) => ({
    id: message.id,
    role: message.role,
    content: message.content,
    createdAt: message.createdAt.toISOString(),
    files:
      message.chatRequestId && lastUserOfRun.get(message.chatRequestId) === message.id
        ? (message.chatRequest?.files ?? []).map((file) => ({ id: file.fileId, name: file.name, kind: file.kind }))
        : [],
  }));
}

function toSummary(row: { id: string; title: string; skillId: string | null; skillVersionId: string | null; createdAt: Date; updatedAt: Date }): ConversationSummaryDto {
  return {
    id: row.id,
    title: row.title,
    skillId: row.skillId,
    skillVersionId: row.skillVersionId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
