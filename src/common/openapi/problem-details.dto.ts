import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ERROR_CODES } from '../errors/error-codes';

export class FieldErrorDto {
  @ApiProperty({
    example: 'email',
    description: 'Dotted path of the offending field.',
  })
  field!: string;

  @ApiProperty({
    example: 'isEmail',
    description: 'Machine-readable reason (e.g. unknown_field, isEmail).',
  })
  code!: string;

  @ApiProperty({ example: 'email must be an email' })
  message!: string;
}

/** RFC 9457 problem details: the body of every error response. */
export class ProblemDetailsDto {
  @ApiProperty({
    example: 'urn:problem-type:validation-failed',
    description: 'URI identifying the problem type.',
  })
  type!: string;

  @ApiProperty({ example: 'The request is not valid' })
  title!: string;

  @ApiProperty({ example: 400 })
  status!: number;

  @ApiProperty({ example: 'Unknown field: price.' })
  detail!: string;

  @ApiProperty({
    enum: Object.keys(ERROR_CODES),
    example: 'validation_failed',
    description: 'Stable machine code.',
  })
  code!: string;

  @ApiProperty({
    example: '0b6f5f0e-7a43-4c4e-9b59-2f0c5d1e9a11',
    description: 'Also sent as the x-request-id header.',
  })
  requestId!: string;

  @ApiPropertyOptional({
    type: [FieldErrorDto],
    description: 'Present for validation errors: one entry per problem.',
  })
  errors?: FieldErrorDto[];
}
