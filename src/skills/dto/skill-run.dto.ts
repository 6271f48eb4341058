import { ApiProperty } from '@nestjs/swagger';
import { IdempotentRunDto } from '../../chat/dto/chat-request.dto';
import { RawJson } from '../../common/validation/raw-json';

function skillInputProblem(value: unknown): string | null {
  const acceptable =
    typeof value === 'string'
      ? value.trim().length > 0
      : typeof value === 'object' && value !== null;
  return acceptable
    ? null
    : 'input must be a non-blank string or a JSON object or array';
}

export class SkillRunDto extends IdempotentRunDto {
  /**
   * The single user message: a string is sent as it is, an object or array as its JSON text. Validated
   * against the latest version's input_schema when it has one (422 otherwise).
   */
  @ApiProperty({
    oneOf: [
      { type: 'string' },
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
    ],
    example: { text: 'Meeting notes…' },
  })
  @RawJson({ required: true, check: skillInputProblem })
  input!: unknown;
}
