import { ApiProperty } from '@nestjs/swagger';
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

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** Time of the latest message. */
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

export class MessageDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['system', 'user', 'assistant'] })
  role!: 'system' | 'user' | 'assistant';

  content!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** The files the turn attached (`fileIds`), on its last user message; empty otherwise. */
  files!: AttachedFileDto[];
}

export class ConversationDto extends ConversationSummaryDto {
  /** In the order they were written. */
  messages!: MessageDto[];
}
