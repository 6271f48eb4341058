import {
  Body,
  Controller,
  Delete,
  HttpCode,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { VerifiedEmailRequired } from '../auth/verified-email.guard';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import { Request, Response } from 'express';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { ChatAdmission } from './admission/chat-admission';
import { STREAMED_ANSWER_RESPONSE } from './chat.controller';
import { abortWhenClientLeaves, writeAnswer } from './chat-response.writer';
import { ConversationTurnsService } from './conversation-turns.service';
import { EditMessageDto, RegenerateDto } from './dto/conversation-turn.dto';

/** The conversation routes that go through the chat pipeline (and deletion, which stops its live runs). */
@ApiTags('conversations')
@Controller('conversations')
export class ConversationTurnsController {
  constructor(
    private readonly turns: ConversationTurnsService,
    private readonly admission: ChatAdmission,
  ) {}

  @VerifiedEmailRequired()
  @RateLimit('run-user')
  @Post(':id/regenerate')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Answer the current branch’s last user message again and stream the new answer (idempotent, quota-limited, billed once)',
    description:
      'The earlier answers stay as alternatives; the new one becomes the current branch. `model` defaults to the model that answered before.',
  })
  @ApiProduces('text/plain', 'text/event-stream')
  @ApiOkResponse(STREAMED_ANSWER_RESPONSE)
  @ApiProblems(401, 403, 404, 409, 410, 422, 429, 502, 503)
  async regenerate(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Body() body: RegenerateDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const stream = await this.turns.regenerate(
      user,
      id,
      body,
      this.admission.runRequest(req, abortWhenClientLeaves(res)),
    );
    await writeAnswer(req, res, stream);
  }

  @VerifiedEmailRequired()
  @RateLimit('run-user')
  @Post(':id/messages/:messageId/edit')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Replace a user message from that point on and stream the new answer (idempotent, quota-limited, billed once)',
    description:
      'A new branch starts at the edited message’s parent; the earlier messages after it stay as alternatives.',
  })
  @ApiProduces('text/plain', 'text/event-stream')
  @ApiOkResponse(STREAMED_ANSWER_RESPONSE)
  @ApiProblems(401, 403, 404, 410, 422, 429, 502, 503)
  async edit(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Param('messageId') messageId: string,
    @Body() body: EditMessageDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const stream = await this.turns.edit(
      user,
      id,
      messageId,
      body,
      this.admission.runRequest(req, abortWhenClientLeaves(res)),
    );
    await writeAnswer(req, res, stream);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a conversation and its messages',
    description:
      'Runs still live in it are stopped. Ledger entries stay, no longer naming it; a retry of one of its idempotency keys answers 410.',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(401, 404)
  delete(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<void> {
    return this.turns.delete(user, id);
  }
}
