import {
  Body,
  Controller,
  Delete,
  HttpCode,
  Inject,
  Res,
} from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Response } from 'express';
import { sessionCookieOptions } from '../../auth/cookies';
import { CurrentUser } from '../../auth/current-user.decorator';
import { SessionUser } from '../../auth/session-user';
import { ApiProblems } from '../../common/openapi/api-problems.decorator';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { AccountDeletionService } from './account-deletion.service';
import { DeleteAccountDto } from './dto/delete-account.dto';

@ApiTags('auth')
@Controller('auth')
export class AccountDeletionController {
  constructor(
    private readonly deletion: AccountDeletionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @RateLimit('password-user')
  @Delete('me')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Delete the account and its personal data (GDPR art. 17); cannot be undone',
    description:
      'Needs the password, or for an account without one (Google or GitHub only) a sign-in in the last 10 minutes, and `confirm: "DELETE"`. ' +
      'Active subscriptions are canceled at the payment provider; sessions, sign-in identities, Skills, conversations, files and tokens are deleted. ' +
      'Ledger, checkout and subscription records are kept for accounting, no longer tied to the email, which can register again. ' +
      '503 (payment provider or storage unavailable): nothing was deleted, retry.',
  })
  @ApiNoContentResponse({
    description: 'Deleted; the session cookie is cleared.',
  })
  @ApiProblems(400, 401, 403, 409, 429, 503)
  async deleteAccount(
    @CurrentUser() user: SessionUser,
    @Body() body: DeleteAccountDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    await this.deletion.deleteOwnAccount(user, body);
    res.clearCookie(
      this.config.session.cookieName,
      sessionCookieOptions(this.config),
    );
  }
}
