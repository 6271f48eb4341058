import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import {
  PAYMENT_PROVIDERS,
  PaymentProviderName,
} from '../providers/payment-gateway';

/** Only these two fields: the price always comes from the plan, so amount, currency or interval are 400. */
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
}
