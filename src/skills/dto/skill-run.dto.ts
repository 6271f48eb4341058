import { ApiProperty } from '@nestjs/swagger';
import { IsDefined } from 'class-validator';
import { IdempotentRunDto } from '../../chat/dto/chat-request.dto';

export class SkillRunDto extends IdempotentRunDto {
  /**
   * The single user message: a string is sent as it is, any other JSON value as its JSON text. Validated
   * against the latest version's input_schema when it has one (422 otherwise).
   */
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }], example: { text: 'Meeting notes…' } })
  @IsDefined({ message: 'input is required' })
  input!: unknown;
}
