import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsOptional,
  IsString,
  Matches,
} from 'class-validator';

/** Most tools one run may offer the model. */
export const MAX_TOOLS_PER_RUN = 32;

/**
 * `tools`: ids from GET /v1/tools the model may call in this run (at most 32, no repeats). An empty list
 * is the same request as none; each id is checked against what the caller may use (400 naming it).
 */
export function ToolIdsField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: [String],
      maxItems: MAX_TOOLS_PER_RUN,
      example: ['files.search'],
      description:
        'Tools the model may call in this run (ids from GET /v1/tools); without it, a run without tools.',
    }),
    Transform(({ value }: { value: unknown }) =>
      Array.isArray(value) && value.length === 0 ? undefined : value,
    ),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_TOOLS_PER_RUN),
    ArrayUnique({ message: 'tools must not repeat a tool' }),
    IsString({ each: true }),
    Matches(/^[A-Za-z0-9_.-]{1,200}$/, {
      each: true,
      message: 'each of tools must be a tool id such as files.search',
    }),
  );
}
