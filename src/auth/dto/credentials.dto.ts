import { Transform } from 'class-transformer';
import { normalizeEmail } from '../../common/email';
import { IsEmail, IsString, MaxLength, registerDecorator, ValidationOptions } from 'class-validator';

export const PASSWORD_MIN_CHARACTERS = 12;
export const PASSWORD_MAX_CHARACTERS = 128;

/** Length in characters (code points), so a password of 64 emoji counts 64, not 128 UTF-16 units. */
function IsPasswordLength(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'passwordLength',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: `password must be ${PASSWORD_MIN_CHARACTERS} to ${PASSWORD_MAX_CHARACTERS} characters long`, ...options },
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          const characters = [...value].length;
          return characters >= PASSWORD_MIN_CHARACTERS && characters <= PASSWORD_MAX_CHARACTERS;
        },
      },
    });
}

const normalizedEmail = ({ value }: { value: unknown }) => (typeof value === 'string' ? normalizeEmail(value) : value);

export class RegisterDto {
  /** Trimmed, NFC-normalized and lower-cased before use. */
  @Transform(normalizedEmail)
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email!: string;

  /** 12 to 128 characters. */
  @IsString()
  @IsPasswordLength()
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

  /** The new password, 12 to 128 characters. */
  @IsString()
  @IsPasswordLength()
  password!: string;
}
