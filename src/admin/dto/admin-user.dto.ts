import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';
import { SubscriptionDto } from '../../billing/dto/subscription.response';
import { PageQueryDto } from '../../common/pagination';
import { QuotaDto } from '../../quota/dto/quota.response';
import { UserPlanDto } from '../../users/dto/user.response';

export class AdminUserQueryDto extends PageQueryDto {
  /** Part of the email, any case. */
  @ApiPropertyOptional({ example: 'example.com' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(254)
  email?: string;
}

export class AdminUserSummaryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  email!: string;

  @ApiProperty({ enum: ['user', 'admin'] })
  role!: 'user' | 'admin';

  plan!: UserPlanDto;

  /** When the account was disabled; null while it may sign in. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  disabledAt!: string | null;

  /** When the account was erased (a tombstone kept for the ledger, without email); null otherwise. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  deletedAt!: string | null;

  emailVerified!: boolean;

  twoFactorEnabled!: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AdminUserPageDto {
  data!: AdminUserSummaryDto[];

  @ApiProperty({ type: String, nullable: true })
  nextCursor!: string | null;
}

export class AdminSessionDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  lastSeenAt!: string;

  @ApiProperty({ format: 'date-time' })
  expiresAt!: string;

  @ApiProperty({ type: String, nullable: true })
  userAgent!: string | null;

  @ApiProperty({ type: String, nullable: true })
  ip!: string | null;
}

export class AdminUserDetailDto extends AdminUserSummaryDto {
  subscription!: SubscriptionDto;

  /** Today's credits, as the user sees them at GET /v1/billing/quota. */
  usageToday!: QuotaDto;

  /** Sessions not expired yet, newest first. */
  sessions!: AdminSessionDto[];
}

/** Every admin change says why; the reason goes to the audit log. */
export class ReasonDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 500,
    example: 'Refund requested by the customer',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  reason!: string;
}

export class ChangePlanDto extends ReasonDto {
  /** A plan code from GET /v1/plans. The plan is the admin's: subscription renewals leave it alone. */
  @ApiProperty({ example: 'team' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  planCode!: string;
}

export class SetRoleDto extends ReasonDto {
  @ApiProperty({ enum: ['user', 'admin'] })
  @IsIn(['user', 'admin'], { message: 'role must be user or admin' })
  role!: 'user' | 'admin';
}
