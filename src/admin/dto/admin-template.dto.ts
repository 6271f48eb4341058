import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { JSON_SCHEMA_PROPERTY, MAX_INSTRUCTION_CHARACTERS, MAX_NAME_CHARACTERS } from '../../skills/dto/skill-input.dto';
import { SkillTemplateDto } from '../../skills/dto/skill.response';
import { RawJson } from '../../common/validation/raw-json';

export const TEMPLATE_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
const MAX_DESCRIPTION_CHARACTERS = 1000;

/** What create and update share: the optional schemas and the audit reason. */
class TemplateSchemasDto {
  @ApiPropertyOptional(JSON_SCHEMA_PROPERTY)
  @RawJson()
  input_schema?: unknown;

  @ApiPropertyOptional(JSON_SCHEMA_PROPERTY)
  @RawJson()
  output_schema?: unknown;

  /** Why, for the audit log. */
  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  reason?: string;
}

export class CreateTemplateDto extends TemplateSchemasDto {
  /** A slug: lower-case letters, digits and dashes, 1 to 64 characters. */
  @ApiProperty({ example: 'meeting-notes' })
  @IsString()
  @Matches(TEMPLATE_ID, { message: 'id must be a slug: a-z, 0-9 and dashes, 1 to 64 characters' })
  id!: string;

  @ApiProperty({ maxLength: MAX_NAME_CHARACTERS })
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxLength(MAX_NAME_CHARACTERS)
  name!: string;

  @ApiProperty({ maxLength: MAX_DESCRIPTION_CHARACTERS })
  @IsString()
  @Matches(/\S/, { message: 'description must not be blank' })
  @MaxLength(MAX_DESCRIPTION_CHARACTERS)
  description!: string;

  @ApiProperty({ maxLength: MAX_INSTRUCTION_CHARACTERS })
  @IsString()
  @Matches(/\S/, { message: 'instruction must not be blank' })
  @MaxLength(MAX_INSTRUCTION_CHARACTERS)
  instruction!: string;
}

/**
 * Every field optional; absent ones are left as they are, a null schema is removed. (Its rules repeat
 * CreateTemplateDto's instead of being inherited: class-validator merges a parent's @IsOptional into the
 * child, which would make the create fields optional.)
 */
export class UpdateTemplateDto extends TemplateSchemasDto {
  @ApiPropertyOptional({ maxLength: MAX_NAME_CHARACTERS })
  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxLength(MAX_NAME_CHARACTERS)
  name?: string;

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION_CHARACTERS })
  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'description must not be blank' })
  @MaxLength(MAX_DESCRIPTION_CHARACTERS)
  description?: string;

  @ApiPropertyOptional({ maxLength: MAX_INSTRUCTION_CHARACTERS })
  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'instruction must not be blank' })
  @MaxLength(MAX_INSTRUCTION_CHARACTERS)
  instruction?: string;
}

export class TemplateReasonDto {
  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  reason?: string;
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
