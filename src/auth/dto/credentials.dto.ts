import { Transform } from 'class-transformer';
import { normalizeEmail } from '../../common/email';
import {
  IsEmail,
  IsString,
  MaxLength,
  registerDecorator,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';
import { passwordProblem } from '../password-policy';

/**
 * A new password (register, reset): 12-128 characters (code points, so 64 emoji count 64), not only
 * whitespace, not a common breached password. The message says which rule it broke.
 */
function IsAcceptablePassword(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'acceptablePassword',
      target: target.constructor,
      propertyName: String(propertyName),
      options: {
        message: (args: ValidationArguments) =>
          (typeof args.value === 'string'
            ? passwordProblem(args.value)
            : null) ?? 'password must be a string',
        ...options,
      },
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && passwordProblem(value) === null,
      },
    });
}

const normalizedEmail = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? normalizeEmail(value) : value;

export class RegisterDto {
  /** Trimmed, NFC-normalized and lower-cased before use. */
  @Transform(normalizedEmail)
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email!: string;

  /** 12 to 128 characters, not only spaces, not one of the most common breached passwords. */
  @IsString()
  @IsAcceptablePassword()
  password!: string;
}

export class LoginDto {
  /** Trimmed, NFC-normalized and lower-cased before use. */
  @Transform(normalizedEmail)
  @IsString()
  @MaxLength(254)
  email!: string;

  @IsString()
  @MaxLength(1024)
  password!: string;
}

export class ForgotPasswordDto {
  /** Trimmed, NFC-normalized and lower-cased before use. */
  @Transform(normalizedEmail)
  @IsString()
  @MaxLength(254)
  email!: string;
}

export class ResetPasswordDto {
  /** The token from the reset link. */
  @IsString()
  @MaxLength(256)
  token!: string;

  /** The new password: 12 to 128 characters, not only spaces, not one of the most common breached passwords. */
  @IsString()
  @IsAcceptablePassword()
  password!: string;
}

export class ChangePasswordDto {
  @IsString()
  @MaxLength(1024)
  currentPassword!: string;

  /** The new password: 12 to 128 characters, not only spaces, not one of the most common breached passwords. */
  @IsString()
  @IsAcceptablePassword()
  newPassword!: string;
}
