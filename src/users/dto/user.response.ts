import { ApiProperty } from '@nestjs/swagger';
import { PublicUserRow } from '../users.repository';

export class UserPlanDto {
  @ApiProperty({ example: 'free' })
  code!: string;

  @ApiProperty({ example: 'Free' })
  name!: string;
}

/** The account as its owner sees it: never a password hash. */
export class UserDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'ada@example.com' })
  email!: string;

  @ApiProperty({ enum: ['user', 'admin'] })
  role!: 'user' | 'admin';

  plan!: UserPlanDto;

  @ApiProperty({
    description:
      'Whether the account proved its email (a verification link, or a Google or GitHub sign-in with that verified address).',
  })
  emailVerified!: boolean;

  @ApiProperty({
    description: 'Whether sign-in asks for a second factor (TOTP).',
  })
  twoFactorEnabled!: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export function toUserDto(row: PublicUserRow): UserDto {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    plan: { code: row.plan.code, name: row.plan.name },
    emailVerified: row.emailVerifiedAt !== null,
    twoFactorEnabled: row.totpEnabledAt !== null,
    createdAt: row.createdAt.toISOString(),
  };
}
