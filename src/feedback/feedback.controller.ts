import { Body, Controller, Delete, HttpCode, Param, Put } from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { PutFeedbackDto } from './dto/feedback.input';
import { MessageFeedbackDto } from './dto/message-feedback.dto';
import { FeedbackService } from './feedback.service';

@ApiTags('conversations')
@Controller('conversations/:id/messages/:messageId/feedback')
export class FeedbackController {
  constructor(private readonly feedback: FeedbackService) {}

  @Put()
  @ApiOperation({
    summary:
      'Rate an answer: thumbs up or down, with optional tags and comment',
    description:
      'Replaces any earlier rating of the message. 400 on a message that is not an answer (user or system).',
  })
  @ApiOkResponse({ type: MessageFeedbackDto })
  @ApiProblems(400, 401, 404)
  rate(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Param('messageId') messageId: string,
    @Body() body: PutFeedbackDto,
  ): Promise<MessageFeedbackDto> {
    return this.feedback.rate(user, id, messageId, body);
  }

  @Delete()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove the rating of an answer',
    description: 'Also 204 when it had none.',
  })
  @ApiNoContentResponse({ description: 'Not rated (any more).' })
  @ApiProblems(401, 404)
  unrate(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Param('messageId') messageId: string,
  ): Promise<void> {
    return this.feedback.unrate(user, id, messageId);
  }
}
