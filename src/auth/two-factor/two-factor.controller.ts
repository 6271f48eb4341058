import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Request, Response } from 'express';
import { Public } from '../../common/decorators/public.decorator';
import { ApiProblems } from '../../common/openapi/api-problems.decorator';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { UserDto } from '../../users/dto/user.response';
import { clientInfo } from '../client-info';
import { AuthService } from '../auth.service';
import {
  clearPendingSignInCookie,
  pendingSignInCookieName,
  readCookie,
  setSessionCookie,
} from '../cookies';
import { CurrentUser } from '../current-user.decorator';
import { SessionUser } from '../session-user';
import {
  DisableTwoFactorDto,
  EnableTwoFactorDto,
  RecoveryCodesDto,
  SecondFactorDto,
  secondFactorOf,
  TwoFactorSetupDto,
  TwoFactorStatusDto,
} from './two-factor.dto';
import { TwoFactorService } from './two-factor.service';

@ApiTags('auth')
@Controller('auth/2fa')
export class TwoFactorController {
  constructor(
    private readonly twoFactor: TwoFactorService,
    private readonly auth: AuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      'Whether two-factor sign-in is on, and how many recovery codes are left',
  })
  @ApiOkResponse({ type: TwoFactorStatusDto })
  @ApiProblems(401)
  status(@CurrentUser() user: SessionUser): Promise<TwoFactorStatusDto> {
    return this.twoFactor.status(user);
  }

  @Post('setup')
  @ApiOperation({
    summary:
      'Start enrolling an authenticator app: a new TOTP secret and its otpauth URI (2FA is on only after enable)',
  })
  @ApiCreatedResponse({ type: TwoFactorSetupDto })
  @ApiProblems(401, 409)
  setup(@CurrentUser() user: SessionUser): Promise<TwoFactorSetupDto> {
    return this.twoFactor.setup(user);
  }

  @Post('enable')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Turn two-factor sign-in on with a code of the new secret; answers ten ' +
      'recovery codes, shown once. A session signed in more than 10 minutes ' +
      'ago also sends the password.',
  })
  @ApiOkResponse({ type: RecoveryCodesDto })
  @ApiProblems(400, 401, 403, 409, 429)
  enable(
    @CurrentUser() user: SessionUser,
    @Body() body: EnableTwoFactorDto,
  ): Promise<RecoveryCodesDto> {
    return this.twoFactor.enable(user, body.code, body.password);
  }

  @RateLimit('password-user')
  @Post('disable')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Turn two-factor sign-in off with the password and a code (or a recovery code)',
  })
  @ApiNoContentResponse({
    description: 'Two-factor sign-in is off; the recovery codes are void.',
  })
  @ApiProblems(400, 401, 403, 409)
  disable(
    @CurrentUser() user: SessionUser,
    @Body() body: DisableTwoFactorDto,
  ): Promise<void> {
    return this.twoFactor.disable(user, body.password, secondFactorOf(body));
  }

  @Public()
  @RateLimit('two-factor-ip')
  @Post('verify')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Finish a sign-in that answered two_factor_required: the pending cookie and a code or a recovery code',
  })
  @ApiOkResponse({
    type: UserDto,
    description:
      'Signed in: the session cookie is set and the pending cookie cleared.',
  })
  @ApiProblems(400, 401, 429)
  async verify(
    @Body() body: SecondFactorDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UserDto> {
    const pendingToken = readCookie(
      req.headers.cookie,
      pendingSignInCookieName(this.config),
    );
    const signedIn = await this.auth.completeSignIn(
      pendingToken,
      secondFactorOf(body),
      clientInfo(req),
    );
    setSessionCookie(res, this.config, signedIn.session);
    clearPendingSignInCookie(res, this.config);
    return signedIn.user;
  }
}
