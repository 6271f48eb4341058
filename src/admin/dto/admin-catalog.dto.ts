import { ApiProperty } from '@nestjs/swagger';
import { ModelPriceDto, PlanPriceDto } from '../../plans/dto/plan.response';

export class AdminPlanDto {
  @ApiProperty({ example: 'pro' })
  code!: string;

  name!: string;

  price!: PlanPriceDto;

  dailyCredits!: number;

  storageQuotaBytes!: number;

  checkoutAllowed!: boolean;

  /** False once removed from the catalog file (plans are never deleted). */
  active!: boolean;

  /** Ids of the models the plan may use. */
  models!: string[];

  /** Accounts on this plan now. */
  users!: number;
}

export class AdminPlanListDto {
  data!: AdminPlanDto[];
}

export class AdminModelDto {
  @ApiProperty({ example: 'openai/gpt-4o-mini' })
  id!: string;

  name!: string;

  provider!: string;

  upstreamModel!: string;

  price!: ModelPriceDto;

  maxOutputTokens!: number;

  /** Tokens the model reads and writes in one call (attached files are fitted into it). */
  contextWindowTokens!: number;

  active!: boolean;
}

export class AdminModelListDto {
  data!: AdminModelDto[];
}
