import { Controller, Get, Header, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { Public } from '../common/decorators/public.decorator';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { ConversationDto } from '../conversations/dto/conversation.response';
import { SharedConversationDto } from './dto/shared-conversation.response';
import { SharesService } from './shares.service';

const NO_INDEX_HEADER = {
  'X-Robots-Tag': {
    description: '`noindex`: search engines keep shared conversations out.',
    schema: { type: 'string' as const },
  },
};

/**
 * The reader's side of share links: every answer here says `X-Robots-Tag: noindex` (SharesModule's
 * middleware, so refusals and 404s too). docs/adr/0064-share-links-and-feedback.md
 */
@ApiTags('shares')
@Controller('shared')
export class SharedConversationsController {
  constructor(private readonly shares: SharesService) {}

  @Public()
  @Get(':shareId')
  @RateLimit('shared-ip')
  @Header('Cache-Control', 'private')
  @ApiOperation({
    summary: 'A shared conversation, to anyone with the link (no session)',
    description:
      'Title, messages (role, text, model, tool calls without their results, attached file names) and the time it was shared; never who shared it. 404 once the link was revoked, replaced, or its conversation or account deleted.',
  })
  @ApiOkResponse({
    type: SharedConversationDto,
    headers: {
      ...NO_INDEX_HEADER,
      'Cache-Control': {
        description: '`private`',
        schema: { type: 'string' as const },
      },
    },
  })
  @ApiProblems(404)
  read(@Param('shareId') shareId: string): Promise<SharedConversationDto> {
    return this.shares.read(shareId);
  }

  @Post(':shareId/fork')
  @RateLimit('share-user')
  @ApiOperation({
    summary:
      "Copy a shared conversation into a new conversation of the caller's, to go on chatting in it",
    description:
      'The new conversation holds the snapshot’s messages (their models and tool calls, without files or Skill); its id goes in POST /v1/chat `conversationId`.',
  })
  @ApiCreatedResponse({ type: ConversationDto, headers: NO_INDEX_HEADER })
  @ApiProblems(401, 404)
  fork(
    @CurrentUser() user: SessionUser,
    @Param('shareId') shareId: string,
  ): Promise<ConversationDto> {
    return this.shares.fork(user, shareId);
  }
}
