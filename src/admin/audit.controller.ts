import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AdminOnly } from './admin.guard';
import { AuditService } from './audit.service';
import { AuditPageDto, AuditQueryDto } from './dto/audit-entry.dto';

@AdminOnly()
@Controller('admin/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    summary:
      'Every admin action, newest first: admin, action, target, before/after, reason, time',
  })
  @ApiOkResponse({ type: AuditPageDto })
  @ApiProblems(400)
  list(@Query() query: AuditQueryDto): Promise<AuditPageDto> {
    return this.audit.list(query);
  }
}
