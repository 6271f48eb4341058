import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsEmail,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { normalizeEmail } from '../../common/email';

export const ORG_ROLES = ['owner', 'admin', 'member'] as const;
export type OrgRoleName = (typeof ORG_ROLES)[number];
export const MAX_ORG_NAME_CHARACTERS = 100;
/** A cap above a day of any plan's pool means nothing; this bound keeps it an int. */
export const MAX_DAILY_CREDIT_LIMIT = 1_000_000_000;

const trimmed = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value;

export class OrgNameDto {
  /** 1 to 100 characters (trimmed). */
  @Transform(trimmed)
  @IsString()
  @IsNotEmpty()
  @Matches(/\S/, { message: 'name must not be blank' })
  // It goes into mail subjects and headers of the web client: no line breaks or other control characters.
  @Matches(/^\P{Cc}*$/u, {
    message: 'name must not contain control characters',
  })
  @MaxLength(MAX_ORG_NAME_CHARACTERS)
  name!: string;
}

export class InvitationInputDto {
  /** The address the link is mailed to; only an account with this verified address can accept it. */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? normalizeEmail(value) : value,
  )
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email!: string;

  /** The role the invitee gets; only an owner may invite an owner. */
  @ApiProperty({ enum: ORG_ROLES })
  @IsIn(ORG_ROLES, { message: 'role must be one of owner, admin, member' })
  role!: OrgRoleName;
}

export class AcceptInvitationDto {
  /** The token of the invitation link. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  token!: string;
}

export class MemberChangeDto {
  /** Only an owner makes or unmakes owners; the last owner keeps the role. */
  @ApiPropertyOptional({ enum: ORG_ROLES })
  @IsOptional()
  @IsIn(ORG_ROLES, { message: 'role must be one of owner, admin, member' })
  role?: OrgRoleName;

  /** Credits of the pool this member may spend per UTC day; null removes the cap. */
  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 0,
    maximum: MAX_DAILY_CREDIT_LIMIT,
  })
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_DAILY_CREDIT_LIMIT)
  dailyCreditLimit?: number | null;
}

export class UsageQueryDto {
  /** First UTC day (YYYY-MM-DD), inclusive; default 30 days before `to`. */
  @ApiPropertyOptional({ format: 'date' })
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'from must be a date YYYY-MM-DD' })
  from?: string;

  /** Last UTC day (YYYY-MM-DD), inclusive; default today. */
  @ApiPropertyOptional({ format: 'date' })
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'to must be a date YYYY-MM-DD' })
  to?: string;
}
