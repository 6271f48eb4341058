import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { LedgerEntryDto } from '../../ledger/dto/ledger-entry.response';
import { QuotaDto } from '../../quota/dto/quota.response';
import { ReasonDto } from './admin-user.dto';

const DAY = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const DAY_MESSAGE = 'must be a UTC day, YYYY-MM-DD';

export class GrantCreditsDto extends ReasonDto {
  /** Extra credits for each day of the period, on top of the plan's daily credits. */
  @ApiProperty({ minimum: 1, maximum: 1_000_000, example: 500 })
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  credits!: number;

  /** First UTC day covered (default: today). */
  @ApiPropertyOptional({ example: '2026-11-22' })
  @IsOptional()
  @Matches(DAY, { message: `firstDay ${DAY_MESSAGE}` })
  firstDay?: string;

  /** Last UTC day covered (default: firstDay); at most 366 days after firstDay. */
  @ApiPropertyOptional({ example: '2026-11-30' })
  @IsOptional()
  @Matches(DAY, { message: `lastDay ${DAY_MESSAGE}` })
  lastDay?: string;
}

export class CreditGrantDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  credits!: number;

  @ApiProperty({ example: '2026-11-22' })
  firstDay!: string;

  @ApiProperty({ example: '2026-11-30' })
  lastDay!: string;

  reason!: string;
}

export class CreditGrantResultDto {
  grant!: CreditGrantDto;

  /** The user's credits today, grant included when it covers today. */
  usageToday!: QuotaDto;
}

/** Filters of the ledger and usage views; days are UTC and inclusive. */
export class UsageFilterDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'userId must be a UUID' })
  userId?: string;

  /** A model id, e.g. `local/echo`. */
  @ApiPropertyOptional({ example: 'local/echo' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  model?: string;

  @ApiPropertyOptional({ example: '2026-11-01' })
  @IsOptional()
  @Matches(DAY, { message: `from ${DAY_MESSAGE}` })
  from?: string;

  @ApiPropertyOptional({ example: '2026-11-30' })
  @IsOptional()
  @Matches(DAY, { message: `to ${DAY_MESSAGE}` })
  to?: string;
}

export class AdminLedgerQueryDto extends UsageFilterDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: PageQueryDto['limit'];

  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

export class AdminLedgerEntryDto extends LedgerEntryDto {
  @ApiProperty({ format: 'uuid' })
  userId!: string;

  /** The admin who granted the credits (grants only). */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  adminId!: string | null;
}

export class AdminLedgerPageDto {
  data!: AdminLedgerEntryDto[];

  @ApiProperty({ nullable: true, type: String })
  nextCursor!: string | null;
}

export class DailyUsageRowDto {
  @ApiProperty({ example: '2026-11-22' })
  day!: string;

  @ApiProperty({ example: 'local/echo' })
  model!: string;

  /** Billed runs (completed or partial). */
  requests!: number;

  inputTokens!: number;

  outputTokens!: number;

  credits!: number;
}

export class DailyUsageDto {
  /** One row per UTC day and model, oldest day first. */
  data!: DailyUsageRowDto[];
}
