import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { AppError } from '../../common/errors/app-error';
import { SecondFactor } from './two-factor.service';

const CODE_SHAPE = /^\s*\d{6}\s*$/;
const CODE_MESSAGE = 'code must be the 6 digits the authenticator app shows';

export class TwoFactorSetupDto {
  @ApiProperty({
    description: 'The base32 secret, for typing into an authenticator app.',
    example: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
  })
  secret!: string;

  @ApiProperty({
    description: 'The otpauth:// URI, to show as a QR code.',
    example:
      'otpauth://totp/example.com:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=example.com',
  })
  otpauthUri!: string;
}

export class TwoFactorStatusDto {
  enabled!: boolean;

  /** Recovery codes not used yet (0 while 2FA is off). */
  recoveryCodesLeft!: number;
}

export class RecoveryCodesDto {
  @ApiProperty({
    description:
      'Ten single-use codes, shown only now: each signs in once in place of a TOTP code.',
    example: ['k7m2p-x9q4r'],
  })
  recoveryCodes!: string[];
}

export class EnableTwoFactorDto {
  @ApiProperty({
    description: 'A current code of the secret from setup.',
    example: '123456',
  })
  @IsString()
  @Matches(CODE_SHAPE, { message: CODE_MESSAGE })
  code!: string;

  @ApiPropertyOptional({
    description:
      'The account password: needed when this session signed in more than 10 minutes ago (accounts without a password sign in again instead).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  password?: string;
}

/** Exactly one of `code` and `recoveryCode`. */
export class SecondFactorDto {
  @ApiPropertyOptional({
    description: 'A current TOTP code (send this or recoveryCode).',
    example: '123456',
  })
  @ValidateIf((body: SecondFactorDto) => body.recoveryCode === undefined)
  @IsString()
  @Matches(CODE_SHAPE, { message: CODE_MESSAGE })
  code?: string;

  @ApiPropertyOptional({
    description: 'One unused recovery code (send this or code).',
    example: 'k7m2p-x9q4r',
  })
  @ValidateIf((body: SecondFactorDto) => body.code === undefined)
  @IsString()
  @MaxLength(64)
  recoveryCode?: string;
}

export class DisableTwoFactorDto extends SecondFactorDto {
  @ApiPropertyOptional({
    description:
      'The account password (accounts without one: a sign-in in the last 10 minutes instead).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  password?: string;
}

/** The factor of a validated body; both given is refused rather than guessing which one was meant. */
export function secondFactorOf(body: SecondFactorDto): SecondFactor {
  if (body.code !== undefined && body.recoveryCode !== undefined) {
    const message = 'send either code or recoveryCode, not both';
    throw new AppError(
      'validation_failed',
      'Send either code or recoveryCode, not both.',
      { errors: [{ field: 'recoveryCode', code: 'exclusive', message }] },
    );
  }
  return body.code !== undefined
    ? { code: body.code }
    : { recoveryCode: body.recoveryCode };
}
