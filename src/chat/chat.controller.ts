import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { ChatAdmission } from './admission/chat-admission';
import { ChatService } from './chat.service';
import { abortWhenClientLeaves, writeChatStream } from './chat-response.writer';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { ChatRequestDto } from './dto/chat-request.dto';

export const STREAMED_ANSWER_RESPONSE = {
  description:
    'The answer as a streamed text/plain body, each chunk as the model writes it. A connection that ends without the final chunk means the answer broke off (only what was delivered is billed).',
  content: { 'text/plain': { schema: { type: 'string' as const } } },
  headers: {
    'x-conversation-id': { description: 'The conversation the turn belongs to.', schema: { type: 'string' as const, format: 'uuid' } },
    'Idempotent-Replayed': { description: '`true` when this is a retry answered from the original request.', schema: { type: 'string' as const, enum: ['true'] } },
    'x-context-files': { description: 'With `fileIds`: the ids of the files whose text went into the context, comma-separated.', schema: { type: 'string' as const } },
  },
};

@ApiTags('chat')
@Controller('chat')
export class ChatController {
  constructor(
    private readonly chat: ChatService,
    private readonly admission: ChatAdmission,
  ) {}

  @RateLimit('run-user')
  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Send a turn to a model and stream its answer (idempotent, quota-limited, billed once)' })
  @ApiProduces('text/plain')
  @ApiOkResponse(STREAMED_ANSWER_RESPONSE)
  @ApiProblems(401, 403, 404, 422, 429, 502, 503)
  async send(@CurrentUser() user: SessionUser, @Body() body: ChatRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const stream = await this.chat.send(user, body, this.admission.runRequest(req, abortWhenClientLeaves(res)));
    await writeChatStream(res, stream);
  }
}
