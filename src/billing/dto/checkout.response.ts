import { ApiProperty } from '@nestjs/swagger';

export class CheckoutDto {
  @ApiProperty({ format: 'uuid' })
  checkoutId!: string;

  @ApiProperty({ enum: ['stripe', 'paddle'], example: 'stripe' })
  provider!: 'stripe' | 'paddle';

  /**
   * Where to send the buyer: Stripe's hosted Checkout page, or Paddle's checkout link for the transaction.
   * The plan changes only when the provider's signed webhook confirms the payment, never on the redirect back.
   */
  @ApiProperty({ example: 'https://checkout.stripe.com/c/pay/cs_test_123' })
  url!: string;
}
