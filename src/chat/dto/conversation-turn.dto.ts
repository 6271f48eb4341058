import { ToolIdsField } from '../../tools/dto/tool-ids.field';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { IdempotencyKeyDto, OrganizationIdField } from './chat-request.dto';

/** POST /v1/conversations/:id/regenerate */
export class RegenerateDto extends IdempotencyKeyDto {
  /** The model to answer with (on the caller's plan); by default the one that answered before. */
  @ApiPropertyOptional({ example: 'local/echo' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  model?: string;

  @ToolIdsField()
  tools?: string[];

  @OrganizationIdField()
  organizationId?: string;
}

/** POST /v1/conversations/:id/messages/:messageId/edit */
export class EditMessageDto extends RegenerateDto {
  /** The user message's new text, not empty. */
  @IsString()
  @IsNotEmpty()
  content!: string;
}

/** POST /v1/chat/stop */
export class StopRunDto extends IdempotencyKeyDto {}
