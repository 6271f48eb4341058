import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { PageQueryDto } from '../common/pagination';
import { LedgerPageDto } from './dto/ledger-entry.response';
import { LedgerService } from './ledger.service';

@ApiTags('billing')
@Controller('billing')
export class LedgerController {
  constructor(private readonly ledger: LedgerService) {}

  @Get('usage')
  @ApiOperation({
    summary:
      "The caller's ledger: billed runs and granted credits, newest first (cursor pagination)",
  })
  @ApiOkResponse({ type: LedgerPageDto })
  @ApiProblems(401)
  usage(
    @CurrentUser() user: SessionUser,
    @Query() query: PageQueryDto,
  ): Promise<LedgerPageDto> {
    return this.ledger.listUsage(user, query);
  }
}
