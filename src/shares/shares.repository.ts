import { Injectable } from '@nestjs/common';
import { Prisma } from '../infra/prisma/generated/client';
import { PrismaService } from '../infra/prisma/prisma.service';
import { Cursor } from '../common/pagination';
import { SHARE, ShareRow } from './dto/share.response';

/** A share's snapshot as stored, read back for GET /v1/shared/:shareId. */
export interface SnapshotRow {
  id: string;
  title: string;
  snapshot: Prisma.JsonValue;
  createdAt: Date;
}

/** A message of a fork: a copy of a snapshot's message, with the id and parent it gets in the new conversation. */
export interface ForkedMessage {
  id: string;
  parentId: string | null;
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** Written to `Message.copiedFrom` as JSON. */
  copiedFrom: object | null;
}

@Injectable()
export class SharesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Stores the conversation's link in one statement if `userId` owns it, replacing any earlier one (its id
   * included, so the old link answers 404 from this moment). Null when the conversation is not theirs (or
   * was deleted meanwhile: the lock waits for a deletion under way, which then leaves no row).
   */
  async replaceOwned(
    userId: string,
    conversationId: string,
    share: {
      id: string;
      title: string;
      /** Written as JSON. */
      snapshot: object;
      messageCount: number;
    },
  ): Promise<ShareRow | null> {
    const [row] = await this.prisma.$queryRaw<ShareRow[]>`
      INSERT INTO "ConversationShare" (id, "conversationId", "userId", title, snapshot, "messageCount", "createdAt")
      SELECT ${share.id}, c.id, c."userId", ${share.title}, ${JSON.stringify(share.snapshot)}::jsonb, ${share.messageCount}, now()
        FROM "Conversation" c
       WHERE c.id = ${conversationId}::uuid AND c."userId" = ${userId}::uuid
         FOR KEY SHARE OF c
      ON CONFLICT ("conversationId") DO UPDATE
         SET id = EXCLUDED.id, title = EXCLUDED.title, snapshot = EXCLUDED.snapshot,
             "messageCount" = EXCLUDED."messageCount", "createdAt" = EXCLUDED."createdAt"
      RETURNING id, "conversationId"::text AS "conversationId", title, "messageCount", "createdAt"`;
    return row ?? null;
  }

  /** Removes the link of a conversation `userId` owns; whether there was one. */
  async deleteOfOwnedConversation(
    userId: string,
    conversationId: string,
  ): Promise<boolean> {
    const { count } = await this.prisma.conversationShare.deleteMany({
      where: { conversationId, userId },
    });
    return count > 0;
  }

  /** The owner's links, newest first, after the cursor (its id is the conversation's); `limit` + 1 rows. */
  findPageOfOwner(
    userId: string,
    limit: number,
    after?: Cursor,
  ): Promise<ShareRow[]> {
    return this.prisma.conversationShare.findMany({
      where: {
        userId,
        ...(after
          ? {
              OR: [
                { createdAt: { lt: after.at } },
                { createdAt: after.at, conversationId: { lt: after.id } },
              ],
            }
          : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { conversationId: 'desc' }],
      take: limit + 1,
      select: SHARE,
    });
  }

  findSnapshot(id: string): Promise<SnapshotRow | null> {
    return this.prisma.conversationShare.findUnique({
      where: { id },
      select: { id: true, title: true, snapshot: true, createdAt: true },
    });
  }

  /** A new conversation `id` of `userId` holding the messages in their order, in one statement. */
  async createConversationFrom(
    userId: string,
    conversation: { id: string; title: string },
    messages: ForkedMessage[],
  ): Promise<void> {
    const rows = messages.map((message, position) => ({
      ...message,
      position,
    }));
    await this.prisma.$executeRaw`
      WITH conversation AS (
        INSERT INTO "Conversation" (id, "userId", title, "currentMessageId", "createdAt", "updatedAt")
        VALUES (${conversation.id}::uuid, ${userId}::uuid, ${conversation.title}, ${messages.at(-1)?.id ?? null}::uuid, now(), now())
        RETURNING id
      )
      INSERT INTO "Message" (id, "conversationId", "parentId", role, content, "copiedFrom")
      SELECT m.id, conversation.id, m."parentId", m.role::"MessageRole", m.content, m."copiedFrom"
        FROM conversation,
             jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
               AS m(id uuid, "parentId" uuid, role text, content text, "copiedFrom" jsonb, position int)
       ORDER BY m.position`;
  }
}
