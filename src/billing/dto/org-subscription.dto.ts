import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { MAX_SEATS } from '../providers/payment-gateway';

export class OrgSeatsDto {
  /** The seats the organization's subscription should have; never fewer than its members. */
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_SEATS, example: 5 })
  @IsInt()
  @Min(1)
  @Max(MAX_SEATS)
  seats!: number;
}

/** A seat change the provider accepted; the organization has the new seats once its webhook confirms them. */
export class OrgSeatChangeDto {
  /** The seats asked for. */
  @ApiProperty({ type: 'integer', example: 5 })
  seats!: number;

  /** Always `pending`: the pool and the seat limit follow the provider's confirmation, not this request. */
  @ApiProperty({ enum: ['pending'] })
  status!: 'pending';

  /** The seats the organization has now. */
  @ApiProperty({ type: 'integer', example: 3 })
  currentSeats!: number;

  @ApiProperty({ enum: ['stripe', 'paddle'], example: 'stripe' })
  provider!: 'stripe' | 'paddle';
}
