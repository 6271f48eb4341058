import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { PageQueryDto } from '../common/pagination';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { SharePageDto, ShareDto } from './dto/share.response';
import { SharesService } from './shares.service';

/** The owner's side of share links. docs/adr/0064-share-links-and-feedback.md */
@ApiTags('shares')
@Controller()
export class SharesController {
  constructor(private readonly shares: SharesService) {}

  @Post('conversations/:id/share')
  @RateLimit('share-user')
  @ApiOperation({
    summary:
      'Share a conversation: a read-only snapshot of its current branch as it is now, readable by anyone with the link',
    description:
      'Later messages are not in it. Sharing again replaces the snapshot and the link: the previous `shareId` answers 404 from then on. 409 while the conversation has no message.',
  })
  @ApiCreatedResponse({ type: ShareDto })
  @ApiProblems(401, 404, 409)
  share(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<ShareDto> {
    return this.shares.share(user, id);
  }

  @Delete('conversations/:id/share')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Stop sharing a conversation: its link answers 404 at once',
    description: 'Also 204 when it was not shared.',
  })
  @ApiNoContentResponse({ description: 'Not shared (any more).' })
  @ApiProblems(401, 404)
  unshare(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<void> {
    return this.shares.unshare(user, id);
  }

  @Get('shares')
  @ApiOperation({
    summary: "The caller's share links, newest first (cursor pagination)",
  })
  @ApiOkResponse({ type: SharePageDto })
  @ApiProblems(401)
  list(
    @CurrentUser() user: SessionUser,
    @Query() query: PageQueryDto,
  ): Promise<SharePageDto> {
    return this.shares.list(user, query);
  }
}
