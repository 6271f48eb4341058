import { ApiProperty } from '@nestjs/swagger';
import { FILE_KINDS, FileKind } from '../../files/file-kind';
import {
  TOOL_CALL_STATUSES,
  ToolCallStatus,
} from '../../tools/dto/tool-call.dto';

/** A tool an answer called, as a shared conversation shows it: never what the tool answered. */
export class SharedToolCallDto {
  @ApiProperty({ example: 'files.search' })
  tool!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  arguments!: Record<string, unknown>;

  @ApiProperty({ enum: TOOL_CALL_STATUSES })
  status!: ToolCallStatus;
}

/** A file a turn attached: its name and kind only, never its contents. */
export class SharedFileDto {
  name!: string;

  @ApiProperty({ enum: FILE_KINDS })
  kind!: FileKind;
}

export class SharedMessageDto {
  @ApiProperty({ enum: ['system', 'user', 'assistant'] })
  role!: 'system' | 'user' | 'assistant';

  content!: string;

  /** On answers: the model that wrote it; null on other messages. */
  @ApiProperty({ nullable: true, type: String, example: 'local/echo' })
  model!: string | null;

  /** On answers: the tools called, in order; empty otherwise. */
  toolCalls!: SharedToolCallDto[];

  /** The files the turn attached (names only). */
  files!: SharedFileDto[];

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

/** A read-only snapshot of a conversation's branch, as it was when shared. Names nobody. */
export class SharedConversationDto {
  @ApiProperty({ example: 'q3Vn0cT2pXb8YhLw1aRz7KdE' })
  shareId!: string;

  title!: string;

  /** When it was shared (the snapshot's time). */
  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  messages!: SharedMessageDto[];
}
