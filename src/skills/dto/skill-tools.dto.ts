import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsString,
  Matches,
} from 'class-validator';
import { MAX_TOOLS_PER_RUN } from '../../tools/dto/tool-ids.field';

/** PUT /v1/skills/:id/tools: the tools the Skill's runs offer the model (empty: none). */
export class SkillToolsDto {
  @ApiProperty({
    type: [String],
    maxItems: MAX_TOOLS_PER_RUN,
    example: ['files.search'],
  })
  @IsArray()
  @ArrayMaxSize(MAX_TOOLS_PER_RUN)
  @ArrayUnique({ message: 'allowed_tools must not repeat a tool' })
  @IsString({ each: true })
  @Matches(/^[A-Za-z0-9_.-]{1,200}$/, {
    each: true,
    message: 'each of allowed_tools must be a tool id such as files.search',
  })
  allowed_tools!: string[];
}
