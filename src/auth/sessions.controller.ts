import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Res,
} from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Response } from 'express';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { sessionCookieOptions } from './cookies';
import { CurrentUser } from './current-user.decorator';
import { SessionListDto } from './dto/session.response';
import { SessionUser } from './session-user';
import { SessionsService } from './sessions.service';

@ApiTags('auth')
@Controller('auth/sessions')
export class SessionsController {
  constructor(
    private readonly sessions: SessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'The account’s live sessions, with the current one marked',
  })
  @ApiOkResponse({ type: SessionListDto })
  @ApiProblems(401)
  list(@CurrentUser() user: SessionUser): Promise<SessionListDto> {
    return this.sessions.list(user);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'End one session of the account (ending the current one signs this client out)',
  })
  @ApiNoContentResponse({ description: 'The session has ended.' })
  @ApiProblems(401, 404)
  async end(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const endedCurrent = await this.sessions.endOne(user, id);
    if (endedCurrent)
      res.clearCookie(
        this.config.session.cookieName,
        sessionCookieOptions(this.config),
      );
  }
}
