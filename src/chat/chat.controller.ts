import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { VerifiedEmailRequired } from '../auth/verified-email.guard';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { Request, Response } from 'express';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { ChatAdmission } from './admission/chat-admission';
import { ChatService } from './chat.service';
import { abortWhenClientLeaves, writeAnswer } from './chat-response.writer';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { ChatRequestDto } from './dto/chat-request.dto';
import { CHAT_EVENT_TYPES } from './dto/chat-event.response';
import { StopRunDto } from './dto/conversation-turn.dto';
import { RunStatusDto } from './dto/run-status.response';

export const STREAMED_ANSWER_RESPONSE = {
  description:
    'The answer as a streamed text/plain body, each chunk as the model writes ' +
    'it. A connection that ends without the final chunk means the answer ' +
    'broke off (only what was delivered is billed); a stopped answer ends ' +
    'cleanly. ' +
    'With `Accept: text/event-stream`, server-sent events instead: `meta`, ' +
    'one `delta` per chunk (with `tools`: `tool_call` and `tool_result` among ' +
    'them; plain text carries the text only), then `error` (only when it ' +
    'broke off), `usage` and `done`; each `data:` line is the JSON of the ' +
    'event schema named. A ' +
    'client joined to a live run gets the same events; a replay of a finished ' +
    'run sends its stored text as one `delta`.',
  content: {
    'text/plain': { schema: { type: 'string' as const } },
    'text/event-stream': {
      schema: {
        type: 'string' as const,
        description:
          'Server-sent events, each an `event:` line naming it and one ' +
          '`data:` line holding its data as JSON; `x-itemSchema` gives the ' +
          'schema of each event as `{ event, data }`.',
      },
      // Each event of the stream, as OpenAPI 3.2's `itemSchema` says it for sequential media types (an
      // extension in this 3.0 document): no schema of the whole stream can describe its events.
      'x-itemSchema': {
        oneOf: CHAT_EVENT_TYPES.map((type) => ({ $ref: getSchemaPath(type) })),
      },
    },
  },
  headers: {
    'x-conversation-id': {
      description: 'The conversation the turn belongs to.',
      schema: { type: 'string' as const, format: 'uuid' },
    },
    'Idempotent-Replayed': {
      description:
        '`true` when this is a retry answered from the original request.',
      schema: { type: 'string' as const, enum: ['true'] },
    },
    'x-context-files': {
      description:
        'With `fileIds`: the ids of the files whose text went into the context, comma-separated.',
      schema: { type: 'string' as const },
    },
    'x-run-status': {
      description: 'On a plain-text replay of a finished run: how it ended.',
      schema: {
        type: 'string' as const,
        enum: ['completed', 'stopped', 'failed'],
      },
    },
  },
};

@ApiTags('chat')
@ApiExtraModels(...CHAT_EVENT_TYPES)
@Controller('chat')
export class ChatController {
  constructor(
    private readonly chat: ChatService,
    private readonly admission: ChatAdmission,
  ) {}

  @VerifiedEmailRequired()
  @RateLimit('run-user')
  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Send a turn to a model and stream its answer (idempotent, quota-limited, billed once)',
  })
  @ApiProduces('text/plain', 'text/event-stream')
  @ApiOkResponse(STREAMED_ANSWER_RESPONSE)
  @ApiProblems(401, 403, 404, 409, 410, 422, 429, 502, 503)
  async send(
    @CurrentUser() user: SessionUser,
    @Body() body: ChatRequestDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const stream = await this.chat.send(
      user,
      body,
      this.admission.runRequest(req, abortWhenClientLeaves(res)),
    );
    await writeAnswer(req, res, stream);
  }

  @Post('stop')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Stop a live chat or Skill run by its idempotencyKey',
    description:
      'The provider call is aborted wherever the run is generated; the stream ' +
      'and every client joined to it end cleanly with the text so far, and ' +
      'only what was produced is billed. A replay of the key returns that ' +
      'text and says it was stopped. Answers the run’s status, also when it ' +
      'had already ended. A client that only disconnects does not stop its ' +
      'run.',
  })
  @ApiOkResponse({ type: RunStatusDto })
  @ApiProblems(401, 404)
  stop(
    @CurrentUser() user: SessionUser,
    @Body() body: StopRunDto,
  ): Promise<RunStatusDto> {
    return this.chat.stop(user, body);
  }
}
