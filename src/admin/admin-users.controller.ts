import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AdminOnly } from './admin.guard';
import { AdminUsersService } from './admin-users.service';
import {
  AdminUserDetailDto,
  AdminUserPageDto,
  AdminUserQueryDto,
  ChangePlanDto,
  ReasonDto,
  SetRoleDto,
} from './dto/admin-user.dto';

@AdminOnly()
@Controller('admin/users')
export class AdminUsersController {
  constructor(private readonly users: AdminUsersService) {}

  @Get()
  @ApiOperation({
    summary: 'Accounts, newest first; `email` filters by part of the address',
  })
  @ApiOkResponse({ type: AdminUserPageDto })
  @ApiProblems(400)
  list(@Query() query: AdminUserQueryDto): Promise<AdminUserPageDto> {
    return this.users.list(query);
  }

  @Get(':id')
  @ApiOperation({
    summary:
      'One account with its plan, subscription, usage today and live sessions',
  })
  @ApiOkResponse({ type: AdminUserDetailDto })
  @ApiProblems(404)
  get(@Param('id') id: string): Promise<AdminUserDetailDto> {
    return this.users.get(id);
  }

  @Put(':id/plan')
  @ApiOperation({
    summary:
      'Set the plan (recorded with the reason); quota follows at once, renewals leave it alone',
  })
  @ApiOkResponse({ type: AdminUserDetailDto })
  @ApiProblems(400, 404, 409)
  changePlan(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: ChangePlanDto,
  ): Promise<AdminUserDetailDto> {
    return this.users.changePlan(admin, id, body);
  }

  @Post(':id/disable')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Disable the account and end its sessions (the last active admin cannot be disabled)',
  })
  @ApiOkResponse({ type: AdminUserDetailDto })
  @ApiProblems(400, 404, 409)
  disable(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: ReasonDto,
  ): Promise<AdminUserDetailDto> {
    return this.users.disable(admin, id, body);
  }

  @Post(':id/enable')
  @HttpCode(200)
  @ApiOperation({ summary: 'Let a disabled account sign in again' })
  @ApiOkResponse({ type: AdminUserDetailDto })
  @ApiProblems(400, 404, 409)
  enable(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: ReasonDto,
  ): Promise<AdminUserDetailDto> {
    return this.users.enable(admin, id, body);
  }

  @Post(':id/two-factor/reset')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Turn two-factor sign-in off for an owner who lost the authenticator and the recovery codes (audited)',
  })
  @ApiOkResponse({ type: AdminUserDetailDto })
  @ApiProblems(400, 404, 409)
  resetTwoFactor(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: ReasonDto,
  ): Promise<AdminUserDetailDto> {
    return this.users.resetTwoFactor(admin, id, body);
  }

  @Put(':id/role')
  @ApiOperation({
    summary:
      'Promote to admin or demote to user (the last active admin cannot be demoted)',
  })
  @ApiOkResponse({ type: AdminUserDetailDto })
  @ApiProblems(400, 404, 409)
  setRole(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: SetRoleDto,
  ): Promise<AdminUserDetailDto> {
    return this.users.setRole(admin, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Erase the account as its owner can (GDPR art. 17), recorded with the reason; cannot be undone',
    description:
      'Subscriptions are canceled at the payment provider, personal data deleted, the row kept as a tombstone without email for the ledger. ' +
      'The last active admin cannot be deleted (409 last_admin); an account already deleted answers 409 account_deleted; 503: nothing was deleted, retry.',
  })
  @ApiNoContentResponse({ description: 'Erased.' })
  @ApiProblems(400, 404, 409, 503)
  delete(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: ReasonDto,
  ): Promise<void> {
    return this.users.delete(admin, id, body);
  }
}
