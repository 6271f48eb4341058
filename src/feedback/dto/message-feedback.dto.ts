import { ApiProperty } from '@nestjs/swagger';

export const FEEDBACK_RATINGS = ['up', 'down'] as const;
export type FeedbackRating = (typeof FEEDBACK_RATINGS)[number];

/** A person's rating of an answer, as GET /v1/conversations/:id shows it on the message. */
export class MessageFeedbackDto {
  @ApiProperty({ enum: FEEDBACK_RATINGS })
  rating!: FeedbackRating;

  @ApiProperty({ type: [String], example: ['inaccurate'] })
  tags!: string[];

  @ApiProperty({ nullable: true, type: String })
  comment!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** When the rating was last written (PUT replaces it). */
  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

/** What a feedback row is read with (`feedback: { select: FEEDBACK }`). */
export const FEEDBACK = {
  rating: true,
  tags: true,
  comment: true,
  createdAt: true,
  updatedAt: true,
} as const;

export interface FeedbackRow {
  rating: FeedbackRating;
  tags: string[];
  comment: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toFeedbackDto(row: FeedbackRow): MessageFeedbackDto {
  return {
    rating: row.rating,
    tags: row.tags,
    comment: row.comment,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
