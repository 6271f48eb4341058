import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { PageQueryDto } from '../common/pagination';
import { ConversationDto, ConversationPageDto } from './dto/conversation.response';
import { ConversationsService } from './conversations.service';

@ApiTags('conversations')
@Controller('conversations')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get()
  @ApiOperation({ summary: "The caller's conversations, newest activity first (cursor pagination)" })
  @ApiOkResponse({ type: ConversationPageDto })
  @ApiProblems(401)
  list(@CurrentUser() user: SessionUser, @Query() query: PageQueryDto): Promise<ConversationPageDto> {
    return this.conversations.list(user, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One of the caller’s conversations with its messages in order' })
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems(401, 404)
  get(@CurrentUser() user: SessionUser, @Param('id') id: string): Promise<ConversationDto> {
    return this.conversations.get(user, id);
  }
}
