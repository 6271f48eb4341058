import { Body, Controller, Get, Param, Patch, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import {
  ConversationListQueryDto,
  UpdateConversationDto,
} from './dto/conversation-query.dto';
import {
  ConversationDto,
  ConversationPageDto,
} from './dto/conversation.response';
import { ConversationsService } from './conversations.service';

@ApiTags('conversations')
@Controller('conversations')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get()
  @ApiOperation({
    summary:
      "The caller's conversations, newest activity first (cursor pagination); with `q`, the best matches first",
    description:
      'Archived conversations are listed only with `archived=true` (and then only they).',
  })
  @ApiOkResponse({ type: ConversationPageDto })
  @ApiProblems(401)
  list(
    @CurrentUser() user: SessionUser,
    @Query() query: ConversationListQueryDto,
  ): Promise<ConversationPageDto> {
    return this.conversations.list(user, query);
  }

  @Get(':id')
  @ApiOperation({
    summary:
      'One of the caller’s conversations with the messages of its current branch, in order',
  })
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems(401, 404)
  get(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<ConversationDto> {
    return this.conversations.get(user, id);
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      'Rename, archive or restore a conversation, or switch its current branch',
    description:
      'At least one of `title`, `archived` and `currentMessageId`. Its last activity (`updatedAt`) does not change.',
  })
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems(401, 404)
  update(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Body() body: UpdateConversationDto,
  ): Promise<ConversationDto> {
    return this.conversations.update(user, id, body);
  }
}
