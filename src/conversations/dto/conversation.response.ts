import { MessageFeedbackDto } from '../../feedback/dto/message-feedback.dto';
import { ShareDto } from '../../shares/dto/share.response';
import { ToolCallDto } from '../../tools/dto/tool-call.dto';
import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { ApiNullableObjectProperty } from '../../common/openapi/nullable-object.decorator';
import { FILE_KINDS, FileKind } from '../../files/file-kind';

export class ConversationSummaryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** Taken from the first message. */
  title!: string;

  /** The Skill this conversation ran, if any. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillId!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillVersionId!: string | null;

  /** Archived conversations are left out of the list unless `archived=true` is asked for. */
  archived!: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** Time of the latest message (renaming or archiving does not change it). */
  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class ConversationPageDto {
  data!: ConversationSummaryDto[];

  /** Pass as `cursor` to get the next page; null on the last page. */
  @ApiProperty({ nullable: true, type: String })
  nextCursor!: string | null;
}

export class AttachedFileDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** The name when it was attached (kept after the file is deleted). */
  name!: string;

  @ApiProperty({ enum: FILE_KINDS })
  kind!: FileKind;
}

/** What the run that wrote an assistant message cost (its ledger entry). */
export class MessageUsageDto {
  inputTokens!: number;
  /** Of inputTokens, those the provider read from its prompt cache (priced apart). */
  cachedInputTokens!: number;
  outputTokens!: number;
  credits!: number;

  /** The catalog id of the model billed for the answer (the one that answered). */
  @ApiProperty({ example: 'local/echo' })
  model!: string;

  /** The model asked for when a fallback answered; null otherwise. */
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'anthropic/claude-haiku-4-5',
  })
  requestedModel!: string | null;
}

@ApiExtraModels(MessageUsageDto, MessageFeedbackDto)
export class ConversationMessageDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** The message this one follows; null for the first. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  parentId!: string | null;

  @ApiProperty({ enum: ['system', 'user', 'assistant'] })
  role!: 'system' | 'user' | 'assistant';

  content!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** The files the turn attached (`fileIds`), on its last user message; empty otherwise. */
  files!: AttachedFileDto[];

  /**
   * When other messages follow the same parent (a regenerated answer, an edited message): the ids of all
   * of them, this one included, oldest first. Empty when there is no alternative. PATCH the conversation
   * with `currentMessageId` to switch to another.
   */
  @ApiProperty({ type: [String], format: 'uuid' })
  alternatives!: string[];

  /** On assistant messages: what their run cost. Null on other messages. */
  @ApiNullableObjectProperty(MessageUsageDto)
  usage!: MessageUsageDto | null;

  /**
   * On assistant messages: the model that wrote it (the one that answered; on a message copied by a fork,
   * the original's). Null on other messages.
   */
  @ApiProperty({ nullable: true, type: String, example: 'local/echo' })
  model!: string | null;

  /** On assistant messages: the tools their run called, in order; empty otherwise. */
  toolCalls!: ToolCallDto[];

  /** On assistant messages: the caller's rating of it (PUT …/feedback); null when unrated and on other messages. */
  @ApiNullableObjectProperty(MessageFeedbackDto)
  feedback!: MessageFeedbackDto | null;
}

@ApiExtraModels(ShareDto)
export class ConversationDto extends ConversationSummaryDto {
  /** The current branch, from the first message to `currentMessageId`. */
  messages!: ConversationMessageDto[];

  /** The last message of the current branch; null while there is none. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  currentMessageId!: string | null;

  /** The conversation's read-only link, while it is shared; null otherwise. */
  @ApiNullableObjectProperty(ShareDto)
  share!: ShareDto | null;
}
