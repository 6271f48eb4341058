import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AdminOnly } from './admin.guard';
import { AdminBillingService } from './admin-billing.service';
import {
  AdminLedgerPageDto,
  AdminLedgerQueryDto,
  CreditGrantResultDto,
  DailyUsageDto,
  GrantCreditsDto,
  UsageFilterDto,
} from './dto/admin-billing.dto';

@AdminOnly()
@Controller('admin')
export class AdminBillingController {
  constructor(private readonly billing: AdminBillingService) {}

  @Post('users/:id/credits')
  @ApiOperation({
    summary:
      'Grant extra credits per day for today or a period (ledger entry with admin and reason)',
  })
  @ApiCreatedResponse({ type: CreditGrantResultDto })
  @ApiProblems(400, 404, 409)
  grant(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: GrantCreditsDto,
  ): Promise<CreditGrantResultDto> {
    return this.billing.grantCredits(admin, id, body);
  }

  @Get('ledger')
  @ApiOperation({
    summary:
      'Ledger entries of every user, newest first; filter by userId, model and UTC days from/to',
  })
  @ApiOkResponse({ type: AdminLedgerPageDto })
  @ApiProblems(400)
  ledger(@Query() query: AdminLedgerQueryDto): Promise<AdminLedgerPageDto> {
    return this.billing.ledger(query);
  }

  @Get('usage/daily')
  @ApiOperation({
    summary:
      'Requests, tokens and credits per UTC day and model (default: the last 30 days)',
  })
  @ApiOkResponse({ type: DailyUsageDto })
  @ApiProblems(400)
  dailyUsage(@Query() query: UsageFilterDto): Promise<DailyUsageDto> {
    return this.billing.dailyUsage(query);
  }
}
