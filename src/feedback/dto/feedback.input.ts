import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { MaxCodePoints } from '../../common/validation/code-points';
import { FEEDBACK_RATINGS, FeedbackRating } from './message-feedback.dto';

export const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 40;
export const MAX_COMMENT_LENGTH = 2000;

const trimmed = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value;
const eachTrimmed = ({ value }: { value: unknown }) =>
  Array.isArray(value)
    ? value.map((item: unknown) =>
        typeof item === 'string' ? item.trim() : item,
      )
    : value;

/** PUT /v1/conversations/:id/messages/:messageId/feedback: the whole rating (it replaces the previous one). */
export class PutFeedbackDto {
  @ApiProperty({ enum: FEEDBACK_RATINGS })
  @IsIn(FEEDBACK_RATINGS, { message: 'rating must be up or down' })
  rating!: FeedbackRating;

  /** Up to 10 short labels (1-40 characters each, trimmed; repeats are kept once). */
  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_TAGS,
    example: ['inaccurate', 'too long'],
  })
  @IsOptional()
  @Transform(eachTrimmed)
  @IsArray({ message: 'tags must be a list of strings' })
  @ArrayMaxSize(MAX_TAGS, { message: `tags holds at most ${MAX_TAGS} tags` })
  @IsString({ each: true, message: 'each tag must be a string' })
  @MinLength(1, { each: true, message: 'a tag must not be empty' })
  @MaxCodePoints(MAX_TAG_LENGTH, {
    each: true,
    message: `a tag has at most ${MAX_TAG_LENGTH} characters`,
  })
  tags?: string[] | null;

  /** Free text, at most 2000 characters (trimmed; empty means none). */
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    maxLength: MAX_COMMENT_LENGTH,
  })
  @IsOptional()
  @Transform(trimmed)
  @IsString({ message: 'comment must be a string' })
  @MaxCodePoints(MAX_COMMENT_LENGTH, {
    message: `comment has at most ${MAX_COMMENT_LENGTH} characters`,
  })
  comment?: string | null;
}

const DAY_OR_INSTANT =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))?$/;
const DAY_OR_INSTANT_MESSAGE =
  'must be a UTC day (YYYY-MM-DD) or an ISO 8601 date-time with its offset';

/** GET /v1/admin/feedback */
export class AdminFeedbackQueryDto {
  /** Only answers of this model (a catalog id such as `local/echo`). */
  @ApiPropertyOptional({ example: 'local/echo' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  model?: string;

  /** Ratings written at or after: a UTC day (from its start) or a date-time. */
  @ApiPropertyOptional({ example: '2026-11-01' })
  @IsOptional()
  @Matches(DAY_OR_INSTANT, { message: `from ${DAY_OR_INSTANT_MESSAGE}` })
  from?: string;

  /** Ratings written before: a UTC day (to its end, inclusive) or a date-time (exclusive). */
  @ApiPropertyOptional({ example: '2026-11-30' })
  @IsOptional()
  @Matches(DAY_OR_INSTANT, { message: `to ${DAY_OR_INSTANT_MESSAGE}` })
  to?: string;

  /** How many of the latest comments, 1 to 100 (default 20). */
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}
