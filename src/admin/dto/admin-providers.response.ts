import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { ApiNullableObjectProperty } from '../../common/openapi/nullable-object.decorator';

/** One key of an endpoint's pool: where it comes from and its fingerprint, never the key itself. */
export class AdminProviderKeyDto {
  /** The variable the key is read from; `NAME#2` for the second key of a variable, `none` without a key. */
  @ApiProperty({ example: 'OPENAI_API_KEY' })
  label!: string;

  /** Names the key in the cooldowns every instance shares (a hash prefix: the key cannot be read from it). */
  @ApiProperty({ example: '3f2a9c0d5e7b1a44' })
  fingerprint!: string;

  /** Until when the key rests after a 429 or a refusal (as this instance knows it); null while it is used. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  coolingDownUntil!: string | null;
}

/** The latest failure of an endpoint's calls. */
export class AdminProviderFailureDto {
  @ApiProperty({ format: 'date-time' })
  at!: string;

  /** The provider's words, short, with the key replaced should it echo it. */
  @ApiProperty({ example: 'openai: HTTP 429: Rate limit reached' })
  reason!: string;
}

/** An endpoint's calls over the last `windowMinutes`, as all instances saw them. */
@ApiExtraModels(AdminProviderFailureDto)
export class AdminProviderHealthDto {
  @ApiProperty({ type: 'integer', example: 15 })
  windowMinutes!: number;

  /** Calls made (retries and fallbacks each count). */
  @ApiProperty({ type: 'integer' })
  calls!: number;

  /** Calls that failed before their first token. */
  @ApiProperty({ type: 'integer' })
  failures!: number;

  /** Keys rested after a 429 or a refusal. */
  @ApiProperty({ type: 'integer' })
  cooldowns!: number;

  /** Mean time to the first token of the calls that had one; null without any. */
  @ApiProperty({ type: 'integer', nullable: true })
  firstTokenMs!: number | null;

  /** The latest failure (it may be older than the window); null without any. */
  @ApiNullableObjectProperty(AdminProviderFailureDto)
  lastFailure!: AdminProviderFailureDto | null;
}

/** A catalog endpoint as this instance resolved it: no key or secret in it. */
export class AdminProviderDto {
  @ApiProperty({ example: 'openai' })
  id!: string;

  /** Its wire format: local, openai, anthropic, gemini, azure or bedrock. */
  @ApiProperty({ example: 'openai' })
  kind!: string;

  /** False when a variable it needs is unset here: its models answer 503 provider_not_configured. */
  configured!: boolean;

  /** Why it cannot be used here (names variables, never values); null when configured. */
  @ApiProperty({ type: String, nullable: true })
  unavailableReason!: string | null;

  /** Ids of the active catalog models reached through it, in catalog order. */
  @ApiProperty({ type: [String], example: ['openai/gpt-4o-mini'] })
  models!: string[];

  /** Its key pool, in the order keys are taken; empty when not configured. */
  keys!: AdminProviderKeyDto[];

  health!: AdminProviderHealthDto;
}

export class AdminProviderListDto {
  /** Every endpoint of the catalog, in catalog order (`local` first). */
  data!: AdminProviderDto[];
}
