import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { PageQueryDto } from '../../common/pagination';

/** `true` and `false` as a query string or JSON sends them; anything else stays as it is (and fails). */
const booleanFromText = ({ value }: { value: unknown }) =>
  value === 'true' ? true : value === 'false' ? false : value;

/** GET /v1/conversations */
export class ConversationListQueryDto extends PageQueryDto {
  /**
   * Search: conversations whose title or message text contain every word, each as a prefix, in any
   * language (full text without stemming); best matches first.
   */
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  q?: string;

  /** `true` lists the archived conversations instead of the others. */
  @ApiPropertyOptional({ type: Boolean, default: false })
  @IsOptional()
  @Transform(booleanFromText)
  @IsBoolean({ message: 'archived must be true or false' })
  archived?: boolean;
}

/** PATCH /v1/conversations/:id: at least one field. */
export class UpdateConversationDto {
  /** 1-200 characters, not only spaces. */
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim() : value,
  )
  @IsNotEmpty({ message: 'title must not be empty' })
  title?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: 'archived must be true or false' })
  archived?: boolean;

  /**
   * Switch branch: the current branch becomes the one through this message of the conversation (one of a
   * message's `alternatives`), down to its newest last message.
   */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIf(
    (dto: UpdateConversationDto) => dto.currentMessageId !== undefined,
  )
  @IsUUID('all', { message: 'currentMessageId must be a message id' })
  currentMessageId?: string;
}
