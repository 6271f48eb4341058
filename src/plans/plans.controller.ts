import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator';
import { PlanListDto } from './dto/plan.response';
import { PlansService } from './plans.service';

@Public()
@ApiTags('plans')
@Controller('plans')
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  /** Public so pricing is visible before sign-in. Ordered as in the catalog. */
  @Get()
  @ApiOperation({ summary: 'List the active plans with pricing and allowed models' })
  list(): Promise<PlanListDto> {
    return this.plans.listActivePlans();
  }
}
