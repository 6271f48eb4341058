import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class VerifyEmailDto {
  /** The token from the verification link. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  token!: string;
}
