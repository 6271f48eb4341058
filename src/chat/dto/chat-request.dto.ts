import { ToolIdsField } from '../../tools/dto/tool-ids.field';
import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';

export const MAX_MESSAGES_PER_REQUEST = 100;
export const MAX_FILES_PER_RUN = 10;
/** 1-255 printable ASCII characters, not only spaces: UUIDs, ULIDs and the like. */
export const IDEMPOTENCY_KEY_PATTERN = /^(?=.*[^ ])[\x20-\x7e]{1,255}$/;
const IDEMPOTENCY_KEY_MESSAGE =
  'idempotencyKey must be 1 to 255 printable ASCII characters';

export class ChatMessageDto {
  @ApiProperty({ enum: ['system', 'user', 'assistant'] })
  @IsIn(['system', 'user', 'assistant'], {
    message: 'role must be system, user or assistant',
  })
  role!: 'system' | 'user' | 'assistant';

  /** Not empty. All contents of one request together are limited (413 beyond). */
  @IsString()
  @IsNotEmpty()
  content!: string;
}

/** The key of every request that runs a model (and of POST /v1/chat/stop, which names one). */
export class IdempotencyKeyDto {
  /**
   * Chosen by the client, unique per request it means (1-255 printable ASCII characters). Retrying with the
   * same key never bills or calls the model twice: it replays, or joins the answer still being written.
   */
  @ApiProperty({
    minLength: 1,
    maxLength: 255,
    example: '4f6c1c8e-1f7a-4a5e-9d55-0e2b8a1f6a10',
  })
  @IsString({ message: IDEMPOTENCY_KEY_MESSAGE })
  @Matches(IDEMPOTENCY_KEY_PATTERN, { message: IDEMPOTENCY_KEY_MESSAGE })
  idempotencyKey!: string;
}

/**
 * `organizationId` of a run: bill it to this organization's daily credit pool (the caller must be a member;
 * its plan decides the models; the member's own cap applies). Absent: the caller's own quota pays.
 * docs/adr/0062-organizations.md
 */
export function OrganizationIdField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      format: 'uuid',
      description:
        "Bill the run to this organization's daily credit pool (members only; its plan's models; the member's cap applies). Absent: your own quota.",
    }),
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' ? value.toLowerCase() : value,
    ),
    IsOptional(),
    IsUUID('all', { message: 'organizationId must be a UUID' }),
  );
}

/** Shared by POST /v1/chat and POST /v1/skills/:id/run. */
export class IdempotentRunDto extends IdempotencyKeyDto {
  /** A catalog model id on the caller's plan, e.g. `local/echo`. */
  @ApiProperty({ example: 'local/echo' })
  @IsString()
  @MaxLength(200)
  model!: string;

  /** Continue this conversation of the caller; without it a new conversation is created. */
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  conversationId?: string;

  /**
   * Up to 10 of the caller's files whose extracted text the model receives, in a delimited section naming
   * each file (the most relevant parts of large files when all of it does not fit the model's context).
   * Each must be the caller's (404) with its text ready (409 while pending, 422 when extraction failed).
   */
  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    maxItems: MAX_FILES_PER_RUN,
  })
  // Ids are matched lower-case (as stored); an empty list is the same request as none.
  @Transform(({ value }: { value: unknown }) =>
    Array.isArray(value)
      ? value.length === 0
        ? undefined
        : value.map((id: unknown) =>
            typeof id === 'string' ? id.toLowerCase() : id,
          )
      : value,
  )
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_FILES_PER_RUN)
  @ArrayUnique({ message: 'fileIds must not repeat a file' })
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  fileIds?: string[];

  @OrganizationIdField()
  organizationId?: string;
}

export class ChatRequestDto extends IdempotentRunDto {
  /** The new turn, 1 to 100 messages, appended to the conversation's stored history. */
  @ApiProperty({
    type: [ChatMessageDto],
    minItems: 1,
    maxItems: MAX_MESSAGES_PER_REQUEST,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_MESSAGES_PER_REQUEST)
  // ValidateNested passes an array nested in the array (`[[...]]`): each item must be a {role, content} object.
  @IsObject({
    each: true,
    message: 'each item of messages must be an object {role, content}',
  })
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages!: ChatMessageDto[];

  @ToolIdsField()
  tools?: string[];
}
