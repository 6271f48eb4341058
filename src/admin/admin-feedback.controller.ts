import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AdminFeedbackQueryDto } from '../feedback/dto/feedback.input';
import { AdminFeedbackDto } from '../feedback/dto/admin-feedback.response';
import { AdminOnly } from './admin.guard';
import { AdminFeedbackService } from './admin-feedback.service';

@AdminOnly()
@Controller('admin/feedback')
export class AdminFeedbackController {
  constructor(private readonly feedback: AdminFeedbackService) {}

  @Get()
  @ApiOperation({
    summary:
      'How answers were rated: ups and downs per model and per Skill, and the latest comments',
    description:
      'Counts ratings by the time they were last written: `from` inclusive, `to` exclusive (a day given as YYYY-MM-DD counts whole).',
  })
  @ApiOkResponse({ type: AdminFeedbackDto })
  @ApiProblems(400)
  summary(@Query() query: AdminFeedbackQueryDto): Promise<AdminFeedbackDto> {
    return this.feedback.summary(query);
  }
}
