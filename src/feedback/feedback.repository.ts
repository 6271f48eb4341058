import { Injectable } from '@nestjs/common';
import { Prisma } from '../infra/prisma/generated/client';
import { PrismaService } from '../infra/prisma/prisma.service';
import { FeedbackRating, FeedbackRow } from './dto/message-feedback.dto';

export interface FeedbackInput {
  rating: FeedbackRating;
  tags: string[];
  comment: string | null;
}

/** The ratings an admin summary covers: written in [from, to) and, with `model`, of that model. */
export interface FeedbackFilter {
  model?: string;
  from?: Date;
  to?: Date;
}

export interface ModelCountRow {
  model: string | null;
  up: number;
  down: number;
}

export interface SkillCountRow {
  skillId: string;
  skillName: string;
  up: number;
  down: number;
}

export interface CommentRow {
  messageId: string;
  rating: FeedbackRating;
  tags: string[];
  comment: string;
  model: string | null;
  skillId: string | null;
  updatedAt: Date;
}

/** The condition on `f` ("MessageFeedback") a filter makes. */
function matching(filter: FeedbackFilter): Prisma.Sql {
  const model = filter.model ?? null;
  const from = filter.from ?? null;
  const to = filter.to ?? null;
  return Prisma.sql`(${model}::text IS NULL OR f."modelId" = ${model}::text)
     AND (${from}::timestamptz IS NULL OR f."updatedAt" >= ${from}::timestamptz)
     AND (${to}::timestamptz IS NULL OR f."updatedAt" < ${to}::timestamptz)`;
}

@Injectable()
export class FeedbackRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Writes the rating of an answer in one statement, if `userId` owns its conversation and it is an
   * assistant message: a new one or a replacement. The model and Skill of the run that wrote the answer
   * are copied in (for a forked answer, the model it was copied with; a Skill deleted since, none). The
   * message is locked against deletion meanwhile (a deletion that won counts as no match, not as a broken
   * foreign key). Null when nothing matched.
   */
  async upsertOnOwnedAnswer(
    userId: string,
    conversationId: string,
    messageId: string,
    input: FeedbackInput,
  ): Promise<FeedbackRow | null> {
    const [row] = await this.prisma.$queryRaw<FeedbackRow[]>`
      INSERT INTO "MessageFeedback" ("messageId", "userId", rating, tags, comment, "modelId", "skillId", "createdAt", "updatedAt")
      SELECT m.id, c."userId", ${input.rating}::"FeedbackRating", ${input.tags}::text[], ${input.comment},
             COALESCE(l."modelId", r."answeredModelId", r."modelId", m."copiedFrom"->>'model'),
             (SELECT s.id FROM "Skill" s WHERE s.id = r."skillId"), now(), now()
        FROM "Message" m
        JOIN "Conversation" c ON c.id = m."conversationId" AND c."userId" = ${userId}::uuid
        LEFT JOIN "ChatRequest" r ON r.id = m."chatRequestId"
        LEFT JOIN "LedgerEntry" l ON l."chatRequestId" = r.id
       WHERE m.id = ${messageId}::uuid AND m."conversationId" = ${conversationId}::uuid AND m.role = 'assistant'
         FOR KEY SHARE OF m, c
      ON CONFLICT ("messageId") DO UPDATE
         SET rating = EXCLUDED.rating, tags = EXCLUDED.tags, comment = EXCLUDED.comment,
             "modelId" = EXCLUDED."modelId", "skillId" = EXCLUDED."skillId", "updatedAt" = now()
      RETURNING rating::text AS rating, tags, comment, "createdAt", "updatedAt"`;
    return row ?? null;
  }

  /** Removes the rating of a message of a conversation `userId` owns; whether there was one. */
  async deleteOnOwnedMessage(
    userId: string,
    conversationId: string,
    messageId: string,
  ): Promise<boolean> {
    const deleted = await this.prisma.$executeRaw`
      DELETE FROM "MessageFeedback" f
       USING "Message" m JOIN "Conversation" c ON c.id = m."conversationId"
       WHERE f."messageId" = ${messageId}::uuid AND m.id = f."messageId"
         AND m."conversationId" = ${conversationId}::uuid AND c."userId" = ${userId}::uuid`;
    return deleted > 0;
  }

  /** Ups and downs per model, most ratings first. */
  countByModel(filter: FeedbackFilter): Promise<ModelCountRow[]> {
    return this.prisma.$queryRaw<ModelCountRow[]>`
      SELECT f."modelId" AS model,
             count(*) FILTER (WHERE f.rating = 'up')::int AS up,
             count(*) FILTER (WHERE f.rating = 'down')::int AS down
        FROM "MessageFeedback" f
       WHERE ${matching(filter)}
       GROUP BY f."modelId"
       ORDER BY count(*) DESC, f."modelId" NULLS LAST`;
  }

  /** Ups and downs of the answers of each Skill's runs, most ratings first. */
  countBySkill(filter: FeedbackFilter): Promise<SkillCountRow[]> {
    return this.prisma.$queryRaw<SkillCountRow[]>`
      SELECT s.id::text AS "skillId", s.name AS "skillName",
             count(*) FILTER (WHERE f.rating = 'up')::int AS up,
             count(*) FILTER (WHERE f.rating = 'down')::int AS down
        FROM "MessageFeedback" f JOIN "Skill" s ON s.id = f."skillId"
       WHERE ${matching(filter)}
       GROUP BY s.id, s.name
       ORDER BY count(*) DESC, s.name, s.id`;
  }

  /** The latest ratings that carry a comment. */
  latestComments(filter: FeedbackFilter, limit: number): Promise<CommentRow[]> {
    return this.prisma.$queryRaw<CommentRow[]>`
      SELECT f."messageId"::text AS "messageId", f.rating::text AS rating, f.tags, f.comment,
             f."modelId" AS model, f."skillId"::text AS "skillId", f."updatedAt"
        FROM "MessageFeedback" f
       WHERE f.comment IS NOT NULL AND ${matching(filter)}
       ORDER BY f."updatedAt" DESC, f."messageId" DESC
       LIMIT ${limit}`;
  }
}
