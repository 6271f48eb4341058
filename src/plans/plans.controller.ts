import { Controller, Get, Res } from '@nestjs/common';
import {
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Response } from 'express';
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
  @ApiOperation({
    summary: 'List the active plans with pricing and allowed models',
  })
  @ApiOkResponse({
    type: PlanListDto,
    headers: {
      ETag: {
        description: 'Changes whenever the catalog changes.',
        schema: { type: 'string' },
      },
    },
  })
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: 'The ETag of a copy the client has: 304 while it is current.',
  })
  @ApiResponse({
    status: 304,
    description: 'The copy the client has is current.',
  })
  async list(@Res() res: Response): Promise<void> {
    const plans = await this.plans.listActivePlans();
    // Express answers 304 itself when If-None-Match matches this ETag.
    res.setHeader('ETag', plans.etag);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json').send(plans.body);
  }
}
