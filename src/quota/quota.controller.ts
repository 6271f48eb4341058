import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { QuotaDto } from './dto/quota.response';
import { QuotaService } from './quota.service';

@ApiTags('billing')
@Controller('billing')
export class QuotaController {
  constructor(private readonly quota: QuotaService) {}

  @Get('quota')
  @ApiOperation({
    summary: "The caller's daily credit limit, usage and remaining balance",
  })
  @ApiOkResponse({ type: QuotaDto })
  @ApiProblems(401)
  current(@CurrentUser() user: SessionUser): Promise<QuotaDto> {
    return this.quota.current(user);
  }
}
