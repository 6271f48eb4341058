import { ApiProperty } from '@nestjs/swagger';
import { UserPlanDto } from '../../users/dto/user.response';

/** The caller's credits for the current UTC day. */
export class QuotaDto {
  /** Daily credits of the plan plus credits granted for today. */
  limit!: number;

  /** Credits spent today by finished requests. */
  used!: number;

  /** Credits held by requests still running. */
  reserved!: number;

  /** limit - used - reserved, never below 0. */
  remaining!: number;

  /** The next UTC midnight, when `used` starts again from 0. */
  @ApiProperty({ format: 'date-time' })
  resetsAt!: string;

  plan!: UserPlanDto;
}
