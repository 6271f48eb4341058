import { ApiProperty } from '@nestjs/swagger';

export class PlanPriceDto {
  /** Amount in the currency's minor units (cents for USD). */
  @ApiProperty({ example: 2000 })
  amount!: number;

  /** ISO 4217 currency code. */
  @ApiProperty({ example: 'USD' })
  currency!: string;

  /** Billing interval; null for plans priced by contract (Enterprise). */
  @ApiProperty({
    enum: ['month', 'year'],
    nullable: true,
    type: String,
    example: 'month',
  })
  interval!: 'month' | 'year' | null;
}

export class ModelPriceDto {
  /** Credits charged per request. */
  perRequest!: number;
  /** Credits per 1,000 input tokens. */
  per1kInputTokens!: number;
  /** Credits per 1,000 output tokens. */
  per1kOutputTokens!: number;
}

export class PlanModelDto {
  /** Public model id, `provider/name`. */
  @ApiProperty({ example: 'openai/gpt-4o-mini' })
  id!: string;

  @ApiProperty({ example: 'GPT-4o mini' })
  name!: string;

  /** Price in credits. */
  price!: ModelPriceDto;
}

export class PlanDto {
  /** The plan's id: the `planId` that POST /v1/billing/checkout takes. */
  @ApiProperty({ example: 'pro' })
  id!: string;

  /** Plan code, the same value as `id` (kept for clients that read it). */
  @ApiProperty({ example: 'pro' })
  code!: string;

  @ApiProperty({ example: 'Pro' })
  name!: string;

  price!: PlanPriceDto;

  /** Credits available per UTC day. */
  @ApiProperty({ example: 2000 })
  dailyCredits!: number;

  /** Whether POST /v1/billing/checkout accepts this plan (false for Free and Enterprise). */
  checkoutAllowed!: boolean;

  /** Models this plan may use. */
  models!: PlanModelDto[];
}

export class PlanListDto {
  data!: PlanDto[];
}
