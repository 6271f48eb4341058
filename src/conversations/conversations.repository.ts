import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { PreparedStatement, PrismaService } from '../infra/prisma/prisma.service';
import { ChatMessage } from '../models/providers/model-provider';

/** A conversation's latest messages, newest first, if the user owns it (one row with nulls when it has none). */
const RECENT_MESSAGES: PreparedStatement = {
  name: 'conversation_recent_messages',
  text: `SELECT m.role::text AS role, m.content
           FROM "Conversation" c
           LEFT JOIN LATERAL (
             SELECT role, content, seq FROM "Message" WHERE "conversationId" = c.id ORDER BY seq DESC LIMIT $3::int
           ) m ON true
          WHERE c.id = $1::uuid AND c."userId" = $2::uuid
          ORDER BY m.seq DESC`,
};

@Injectable()
export class ConversationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The owner's conversations, newest activity first, after the cursor; `limit` + 1 rows to know if more follow. */
  findPageOfOwner(userId: string, limit: number, after?: Cursor) {
    return this.prisma.conversation.findMany({
      where: {
        userId,
        ...olderThan('updatedAt', after),
      },
      orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: { id: true, title: true, skillId: true, skillVersionId: true, createdAt: true, updatedAt: true },
    });
  }

  /** One conversation with its messages in order, only if `userId` owns it. */
  findOwnedWithMessages(userId: string, id: string) {
    return this.prisma.conversation.findFirst({
      where: { id, userId },
      select: {
        id: true,
        title: true,
        skillId: true,
        skillVersionId: true,
        createdAt: true,
        updatedAt: true,
        messages: {
          orderBy: { seq: 'asc' },
          select: {
            id: true,
            role: true,
            content: true,
            createdAt: true,
            chatRequestId: true,
            chatRequest: { select: { files: { orderBy: { position: 'asc' }, select: { fileId: true, name: true, kind: true } } } },
          },
        },
      },
    });
  }

  /**
   * The latest `maxMessages` messages of a conversation `userId` owns, newest first, in one statement;
   * null if there is no such conversation of theirs.
   */
  async findOwnedRecentMessages(userId: string, id: string, maxMessages: number): Promise<{ messages: ChatMessage[] } | null> {
    const rows = await this.prisma.statement<{ role: ChatMessage['role'] | null; content: string | null }>(RECENT_MESSAGES, [id, userId, maxMessages]);
    if (rows.length === 0) return null;
    return { messages: rows.flatMap((row) => (row.role && row.content !== null ? [{ role: row.role, content: row.content }] : [])) };
  }

}
