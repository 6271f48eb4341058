import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Equals, IsOptional, IsString, MaxLength } from 'class-validator';

export const DELETE_CONFIRMATION = 'DELETE';

export class DeleteAccountDto {
  @ApiPropertyOptional({
    description:
      'The account password (required when it has one). Accounts without one: a sign-in in the last 10 minutes instead.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  password?: string;

  @ApiProperty({
    enum: [DELETE_CONFIRMATION],
    description: 'Exactly "DELETE": the deletion cannot be undone.',
  })
  @Equals(DELETE_CONFIRMATION, {
    message: `confirm must be exactly "${DELETE_CONFIRMATION}"`,
  })
  confirm!: typeof DELETE_CONFIRMATION;
}
