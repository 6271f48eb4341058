import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import {
  MAX_SEATS,
  PAYMENT_PROVIDERS,
  PaymentProviderName,
} from '../providers/payment-gateway';

/**
 * The plan, the provider and, to buy seats for an organization, the organization and the seats: the price
 * always comes from the plan (times the seats), so amount, currency or interval are 400.
 */
export class CheckoutRequestDto {
  /** The plan's code, as GET /v1/plans lists it (`pro`, `team`). */
  @ApiProperty({ example: 'pro' })
  @IsString()
  @MaxLength(100)
  planId!: string;

  @ApiProperty({ enum: PAYMENT_PROVIDERS, example: 'stripe' })
  @IsIn(PAYMENT_PROVIDERS, {
    message: `provider must be one of: ${PAYMENT_PROVIDERS.join(', ')}`,
  })
  provider!: PaymentProviderName;

  /**
   * Buy seats of the Team plan for this organization (its admins and owners only) instead of a plan for
   * yourself. Its plan and seats change when the provider confirms the payment.
   */
  @ApiPropertyOptional({ format: 'uuid' })
  // Ids are matched lower-case, as stored: the metadata sent to the provider names it so too.
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  )
  @IsOptional()
  @IsUUID('all', { message: 'organizationId must be a UUID' })
  organizationId?: string;

  /** Seats to buy for the organization (default 1); only with organizationId. The amount is the plan's price times this. */
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_SEATS,
    description:
      'Seats to buy for `organizationId` (1 when absent); only with organizationId.',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_SEATS)
  seats?: number;
}
