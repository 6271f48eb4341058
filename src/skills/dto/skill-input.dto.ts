import {
  ApiProperty,
  ApiPropertyOptional,
  ApiPropertyOptions,
} from '@nestjs/swagger';
import {
  IsInt,
  IsNotEmpty,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { RawJson } from '../../common/validation/raw-json';

export const MAX_NAME_CHARACTERS = 200;
export const MAX_INSTRUCTION_CHARACTERS = 20_000;
export const MAX_VERSION_NUMBER = 1_000_000;

/** How the OpenAPI document shows a JSON Schema field. */
export const JSON_SCHEMA_PROPERTY: ApiPropertyOptions = {
  description:
    'A JSON Schema, draft 2020-12 (an object or a boolean); null or absent for none. At most 32 KiB.',
  // OpenAPI 3.0 has no null type: the object branch is the nullable one.
  oneOf: [
    { type: 'object', additionalProperties: true, nullable: true },
    { type: 'boolean' },
  ],
};

/** What every version carries: the instruction and the optional input and output schemas. */
export class SkillVersionInputDto {
  /** The system message of every run of this version, 1 to 20 000 characters. */
  @IsString()
  @IsNotEmpty()
  @Matches(/\S/, { message: 'instruction must not be blank' })
  @MaxLength(MAX_INSTRUCTION_CHARACTERS)
  instruction!: string;

  /** When set, a run's `input` must validate against it (422 otherwise). */
  @ApiPropertyOptional(JSON_SCHEMA_PROPERTY)
  @RawJson()
  input_schema?: unknown;

  /** Describes the expected answer; stored and exported, not enforced. */
  @ApiPropertyOptional(JSON_SCHEMA_PROPERTY)
  @RawJson()
  output_schema?: unknown;
}

export class CreateSkillDto extends SkillVersionInputDto {
  /** 1 to 200 characters. */
  @ApiProperty({ maxLength: MAX_NAME_CHARACTERS })
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxLength(MAX_NAME_CHARACTERS)
  name!: string;
}

export class PublishVersionDto extends SkillVersionInputDto {}

/** Exactly the export shape. Any other field (id, owner_id, organization_id, allowed_tools, …) is refused. */
export class ImportSkillDto extends CreateSkillDto {
  /** Kept as the Skill's version number (default 1), so export → import → export is identical. */
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_VERSION_NUMBER })
  // Absent means 1; null is not a version number.
  @ValidateIf((body: ImportSkillDto) => body.version !== undefined)
  @IsInt()
  @Min(1)
  @Max(MAX_VERSION_NUMBER)
  version?: number;
}

/** The fields an import may carry: anything else is a 400 forbidden_field. */
export const PORTABLE_FIELDS = [
  'name',
  'instruction',
  'input_schema',
  'output_schema',
  'version',
] as const;
