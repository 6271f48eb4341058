import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { ApiNullableObjectProperty } from '../../common/openapi/nullable-object.decorator';
import { ORG_ROLES, OrgRoleName } from './org-input.dto';

export class OrgPlanDto {
  code!: string;
  name!: string;
}

/** The subscription that pays for the organization's seats. */
export class OrgSubscriptionDto {
  @ApiProperty({
    enum: ['active', 'past_due', 'canceled', 'incomplete', 'paused'],
  })
  status!: string;

  @ApiProperty({ enum: ['stripe', 'paddle'] })
  provider!: string;

  /** The quantity the provider last confirmed. */
  seats!: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  currentPeriodEnd!: string | null;

  cancelAtPeriodEnd!: boolean;
}

/** An organization as one of its members sees it. */
@ApiExtraModels(OrgSubscriptionDto)
export class OrganizationDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  name!: string;

  /** The caller's role in it. */
  @ApiProperty({ enum: ORG_ROLES })
  role!: OrgRoleName;

  /** Its plan: `free` until seats are bought (or an admin sets one). */
  plan!: OrgPlanDto;

  /** Seats bought: the pool is the plan's daily credits times this; on a paid plan, the most members. */
  seats!: number;

  memberCount!: number;

  /** The subscription its seats come from; null on Free or a plan an admin set (seats change only through one). */
  @ApiNullableObjectProperty(OrgSubscriptionDto)
  subscription!: OrgSubscriptionDto | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class OrganizationListDto {
  @ApiProperty({ type: [OrganizationDto] })
  data!: OrganizationDto[];
}

export class OrgMemberDto {
  @ApiProperty({ format: 'uuid' })
  userId!: string;

  /** Null for an erased account. */
  @ApiProperty({ type: 'string', nullable: true })
  email!: string | null;

  @ApiProperty({ enum: ORG_ROLES })
  role!: OrgRoleName;

  /** Credits of the pool this member may spend per UTC day; null: no cap of their own. */
  @ApiProperty({ type: 'integer', nullable: true })
  dailyCreditLimit!: number | null;

  @ApiProperty({ format: 'date-time' })
  joinedAt!: string;
}

export class OrgMemberListDto {
  @ApiProperty({ type: [OrgMemberDto] })
  data!: OrgMemberDto[];
}

export class InvitationDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  email!: string;

  @ApiProperty({ enum: ORG_ROLES })
  role!: OrgRoleName;

  @ApiProperty({ format: 'date-time' })
  expiresAt!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class InvitationListDto {
  @ApiProperty({ type: [InvitationDto] })
  data!: InvitationDto[];
}

export class PoolOfDayDto {
  /** The plan's daily credits times the seats; 0 without a paid plan. */
  limit!: number;

  used!: number;

  /** Credits held by runs still going. */
  reserved!: number;

  remaining!: number;
}

export class MemberOfDayDto {
  /** The member's own daily cap; null for none (the pool is their only bound). */
  @ApiProperty({ type: 'integer', nullable: true })
  limit!: number | null;

  used!: number;

  reserved!: number;

  /** What the member can still reserve today: bounded by their cap and by the pool. */
  remaining!: number;
}

/** The organization's pool today and the caller's own share of it. */
export class OrgQuotaDto {
  plan!: OrgPlanDto;

  seats!: number;

  /** The plan's daily credits times the seats (0 on the free plan: no pool). */
  pool!: PoolOfDayDto;

  /** The caller's own use of the pool today and their cap. */
  member!: MemberOfDayDto;

  @ApiProperty({ format: 'date-time' })
  resetsAt!: string;
}

export class OrgUsageRowDto {
  @ApiProperty({ format: 'date' })
  day!: string;

  @ApiProperty({ format: 'uuid' })
  userId!: string;

  @ApiProperty({ type: 'string', nullable: true })
  email!: string | null;

  credits!: number;

  /** Billed runs. */
  runs!: number;
}

/** Credits per member per UTC day, from the ledger. */
export class OrgUsageDto {
  @ApiProperty({ format: 'date' })
  from!: string;

  @ApiProperty({ format: 'date' })
  to!: string;

  @ApiProperty({ type: [OrgUsageRowDto] })
  data!: OrgUsageRowDto[];
}
