import { ApiProperty } from '@nestjs/swagger';
import {
  SUBSCRIPTION_STATUSES,
  SubscriptionStatus,
} from '../subscription-state';

export class SubscriptionPlanDto {
  @ApiProperty({ example: 'pro' })
  code!: string;

  @ApiProperty({ example: 'Pro' })
  name!: string;
}

export class SubscriptionDto {
  /** The plan the caller has now; its limits apply to chat, Skill runs and uploads. */
  plan!: SubscriptionPlanDto;

  /**
   * The subscription the plan comes from, else the caller's most recent one; `none` when there never was one.
   * `past_due`: the last renewal failed and the plan is kept for BILLING_GRACE_DAYS after the period end.
   */
  @ApiProperty({ enum: [...SUBSCRIPTION_STATUSES, 'none'], example: 'active' })
  status!: SubscriptionStatus | 'none';

  @ApiProperty({
    enum: ['stripe', 'paddle'],
    nullable: true,
    type: String,
    example: 'stripe',
  })
  provider!: 'stripe' | 'paddle' | null;

  /** End of the paid period (ISO 8601), when known. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  currentPeriodEnd!: string | null;

  /** True when the subscription ends at `currentPeriodEnd` instead of renewing; the plan returns to Free then. */
  cancelAtPeriodEnd!: boolean;
}
