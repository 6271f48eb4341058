import { ApiProperty } from '@nestjs/swagger';
import { JSON_SCHEMA_PROPERTY } from './skill-input.dto';

/** Skill resources use the contract's snake_case field names (owner_id, input_schema, …) throughout. */
export class SkillVersionDto {
  /** 1, 2, … (or the number it was imported with, then onwards). Published versions never change. */
  version!: number;

  instruction!: string;

  @ApiProperty(JSON_SCHEMA_PROPERTY)
  input_schema!: unknown;

  @ApiProperty(JSON_SCHEMA_PROPERTY)
  output_schema!: unknown;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

export class SkillSummaryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  name!: string;

  /** The latest version number. */
  version!: number;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

export class SkillDto extends SkillSummaryDto {
  @ApiProperty({ format: 'uuid' })
  owner_id!: string;

  /** Always null: Skills are private to their owner. */
  @ApiProperty({ type: String, nullable: true })
  organization_id!: string | null;

  /** Always empty: no tool is ever bound to a Skill, and imports cannot add one. */
  @ApiProperty({ type: [String] })
  allowed_tools!: string[];

  /** Every version, oldest first. */
  versions!: SkillVersionDto[];
}

export class SkillPageDto {
  data!: SkillSummaryDto[];

  /** Pass as `cursor` to get the next page; null on the last page. */
  @ApiProperty({ nullable: true, type: String })
  nextCursor!: string | null;
}

/** The portable shape: exactly these fields; `POST /v1/skills/import` accepts it back. */
export class SkillExportDto {
  name!: string;

  instruction!: string;

  @ApiProperty(JSON_SCHEMA_PROPERTY)
  input_schema!: unknown;

  @ApiProperty(JSON_SCHEMA_PROPERTY)
  output_schema!: unknown;

  version!: number;
}

export class SkillTemplateDto {
  /** A slug, e.g. `summarize`. */
  id!: string;

  name!: string;

  description!: string;

  instruction!: string;

  @ApiProperty(JSON_SCHEMA_PROPERTY)
  input_schema!: unknown;

  @ApiProperty(JSON_SCHEMA_PROPERTY)
  output_schema!: unknown;
}

export class SkillTemplateListDto {
  data!: SkillTemplateDto[];
}
