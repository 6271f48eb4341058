import { ApiProperty } from '@nestjs/swagger';
import { FEEDBACK_RATINGS, FeedbackRating } from './message-feedback.dto';

export class ModelFeedbackCountDto {
  /** The model that wrote the rated answers; null for answers whose model is not known. */
  @ApiProperty({ nullable: true, type: String, example: 'local/echo' })
  model!: string | null;

  up!: number;
  down!: number;
}

export class SkillFeedbackCountDto {
  @ApiProperty({ format: 'uuid' })
  skillId!: string;

  skillName!: string;
  up!: number;
  down!: number;
}

export class FeedbackCommentDto {
  @ApiProperty({ format: 'uuid' })
  messageId!: string;

  @ApiProperty({ enum: FEEDBACK_RATINGS })
  rating!: FeedbackRating;

  @ApiProperty({ type: [String] })
  tags!: string[];

  comment!: string;

  @ApiProperty({ nullable: true, type: String })
  model!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillId!: string | null;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

/** GET /v1/admin/feedback: how answers were rated, per model and per Skill, and the latest comments. */
export class AdminFeedbackDto {
  /** The period asked for, as instants (null when open). */
  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  from!: string | null;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  to!: string | null;

  /** Most ratings first. */
  byModel!: ModelFeedbackCountDto[];

  /** Answers of Skill runs, most ratings first. */
  bySkill!: SkillFeedbackCountDto[];

  /** Ratings with a comment, latest first. */
  comments!: FeedbackCommentDto[];
}
