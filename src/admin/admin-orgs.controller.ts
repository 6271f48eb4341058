import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { LowerCasePipe } from '../common/validation/lower-case.pipe';
import { AdminOnly } from './admin.guard';
import { AdminOrgsService } from './admin-orgs.service';
import {
  AdminOrgDto,
  AdminOrgPageDto,
  AdminOrgPlanDto,
  AdminOrgQueryDto,
} from './dto/admin-org.dto';

@AdminOnly()
@Controller('admin/orgs')
export class AdminOrgsController {
  constructor(private readonly orgs: AdminOrgsService) {}

  @Get()
  @ApiOperation({
    summary:
      'Organizations, newest first, with plan, seats and member count; `name` filters by part of the name',
  })
  @ApiOkResponse({ type: AdminOrgPageDto })
  @ApiProblems(400)
  list(@Query() query: AdminOrgQueryDto): Promise<AdminOrgPageDto> {
    return this.orgs.list(query);
  }

  @Put(':id/plan')
  @ApiOperation({
    summary:
      "Set an organization's plan and seats (Enterprise by contract; audited); subscription renewals and lapses leave it alone",
    description:
      'Any active plan code: unknown is 400. The free plan takes seats 0; a paid plan needs at least as many seats as members ' +
      '(409 seats_exhausted). Setting exactly the plan and seats of a granting subscription hands the organization back to billing.',
  })
  @ApiOkResponse({ type: AdminOrgDto })
  @ApiProblems(400, 404, 409)
  setPlan(
    @CurrentUser() admin: SessionUser,
    @Param('id', LowerCasePipe) id: string,
    @Body() body: AdminOrgPlanDto,
  ): Promise<AdminOrgDto> {
    return this.orgs.setPlan(admin, id, body);
  }
}
