import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto } from '../../common/pagination';

/** The most seats an admin may give one organization. */
export const MAX_ADMIN_SEATS = 100_000;

export class AdminOrgQueryDto extends PageQueryDto {
  /** Part of the organization's name, any case. */
  @ApiPropertyOptional({ example: 'acme' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;
}

export class AdminOrgDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  name!: string;

  @ApiProperty({ example: 'team' })
  planCode!: string;

  /** The pool's multiplier and, on a paid plan, the most members. */
  @ApiProperty({ type: 'integer' })
  seats!: number;

  @ApiProperty({ type: 'integer' })
  memberCount!: number;

  /** True when an admin set the plan: renewals and lapses of its subscriptions leave it alone; a new purchase replaces it. */
  planSetByAdmin!: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AdminOrgPageDto {
  data!: AdminOrgDto[];

  @ApiProperty({ type: String, nullable: true })
  nextCursor!: string | null;
}

export class AdminOrgPlanDto {
  /** Any active plan code (GET /v1/plans), Enterprise and Free included. */
  @ApiProperty({ example: 'enterprise' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  planCode!: string;

  /** 0 on the free plan; on a paid plan at least the number of members. */
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: MAX_ADMIN_SEATS,
    example: 50,
  })
  @IsInt()
  @Min(0)
  @Max(MAX_ADMIN_SEATS)
  seats!: number;

  /** Why, for the audit log (a contract number, a support case). */
  @ApiPropertyOptional({ minLength: 1, maxLength: 500 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  reason?: string;
}
