import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
} from 'class-validator';
import {
  JSON_SCHEMA_PROPERTY,
  MAX_INSTRUCTION_CHARACTERS,
  MAX_NAME_CHARACTERS,
  SkillVersionInputDto,
} from '../../skills/dto/skill-input.dto';
import { SkillTemplateDto } from '../../skills/dto/skill.response';
import { RawJson } from '../../common/validation/raw-json';
import { AuditReasonDto } from './audit-reason.dto';

export const TEMPLATE_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
const MAX_DESCRIPTION_CHARACTERS = 1000;

/** A required-when-present text field: a string, not blank, at most `max` characters. */
function NonBlankText(field: string, max: number): PropertyDecorator {
  return applyDecorators(
    IsString(),
    Matches(/\S/, { message: `${field} must not be blank` }),
    MaxLength(max),
  );
}

export class TemplateReasonDto extends AuditReasonDto {}

/** A template is a Skill's first version (instruction and schemas) plus its slug, name and description. */
export class CreateTemplateDto extends SkillVersionInputDto {
  /** A slug: lower-case letters, digits and dashes, 1 to 64 characters. */
  @ApiProperty({ example: 'meeting-notes' })
  @IsString()
  @Matches(TEMPLATE_ID, {
    message: 'id must be a slug: a-z, 0-9 and dashes, 1 to 64 characters',
  })
  id!: string;

  @ApiProperty({ maxLength: MAX_NAME_CHARACTERS })
  @NonBlankText('name', MAX_NAME_CHARACTERS)
  name!: string;

  @ApiProperty({ maxLength: MAX_DESCRIPTION_CHARACTERS })
  @NonBlankText('description', MAX_DESCRIPTION_CHARACTERS)
  description!: string;

  /** Why, for the audit log. */
  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  reason?: string;
}

/**
 * Every field optional; absent ones are left as they are, a null schema is removed. (Not derived from
 * CreateTemplateDto: class-validator would merge this class's @IsOptional into the create fields.)
 */
export class UpdateTemplateDto extends TemplateReasonDto {
  @ApiPropertyOptional({ maxLength: MAX_NAME_CHARACTERS })
  @IsOptional()
  @NonBlankText('name', MAX_NAME_CHARACTERS)
  name?: string;

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION_CHARACTERS })
  @IsOptional()
  @NonBlankText('description', MAX_DESCRIPTION_CHARACTERS)
  description?: string;

  @ApiPropertyOptional({ maxLength: MAX_INSTRUCTION_CHARACTERS })
  @IsOptional()
  @NonBlankText('instruction', MAX_INSTRUCTION_CHARACTERS)
  instruction?: string;

  @ApiPropertyOptional(JSON_SCHEMA_PROPERTY)
  @RawJson()
  input_schema?: unknown;

  @ApiPropertyOptional(JSON_SCHEMA_PROPERTY)
  @RawJson()
  output_schema?: unknown;
}

export class AdminTemplateDto extends SkillTemplateDto {
  /** Retired templates are hidden from users and cannot be duplicated; null while offered. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  retiredAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class AdminTemplateListDto {
  data!: AdminTemplateDto[];
}
