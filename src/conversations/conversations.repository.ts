import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { PrismaService } from '../infra/prisma/prisma.service';

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
        messages: { orderBy: { seq: 'asc' }, select: { id: true, role: true, content: true, createdAt: true } },
      },
    });
  }

  /** The latest `maxMessages` messages of a conversation `userId` owns, newest first; null if not theirs. */
  findOwnedRecentMessages(userId: string, id: string, maxMessages: number) {
    return this.prisma.conversation.findFirst({
      where: { id, userId },
      select: { id: true, messages: { orderBy: { seq: 'desc' }, take: maxMessages, select: { role: true, content: true } } },
    });
  }
}
