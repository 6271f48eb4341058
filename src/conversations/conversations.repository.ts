import { Injectable } from '@nestjs/common';
import { Cursor } from '../common/pagination';
import { PrismaService } from '../infra/prisma/prisma.service';

@Injectable()
export class ConversationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The owner's conversations, newest activity first, after the cursor; `limit` + 1 rows to know if more follow. */
  findPageOfOwner(userId: string, limit: number, after?: Cursor) {
    return this.prisma.conversation.findMany({
      where: {
        userId,
        ...(after ? { OR: [{ updatedAt: { lt: after.at } }, { updatedAt: after.at, id: { lt: after.id } }] } : {}),
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
}
