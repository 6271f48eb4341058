import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Post,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Request, Response } from 'express';
import { Public } from '../common/decorators/public.decorator';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { UserDto } from '../users/dto/user.response';
import { AuthService, LoginAccount, SignedIn } from './auth.service';
import { clientInfo } from './client-info';
import { LocalAuthGuard } from './local.strategy';
import {
  sessionCookieOptions,
  setPendingSignInCookie,
  setSessionCookie,
} from './cookies';
import { AppError } from '../common/errors/app-error';
import { CurrentUser } from './current-user.decorator';
import {
  ChangePasswordDto,
  ForgotPasswordDto,
  LoginDto,
  RegisterDto,
  ResetPasswordDto,
} from './dto/credentials.dto';
import { MessageDto } from './dto/message.response';
import { PasswordResetService } from './password-reset.service';
import { SessionUser } from './session-user';

export const FORGOT_PASSWORD_ANSWER =
  'If an account exists for this email, a reset link is on its way.';

const SETS_COOKIE = {
  'Set-Cookie': {
    description:
      'The session cookie (httpOnly, SameSite=Lax, Path=/, Secure over https).',
    schema: { type: 'string' as const },
  },
};

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly resets: PasswordResetService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Public()
  @RateLimit('register-ip')
  @Post('register')
  @ApiOperation({ summary: 'Create an account and sign in' })
  @ApiCreatedResponse({ type: UserDto, headers: SETS_COOKIE })
  @ApiProblems(409)
  async register(
    @Body() body: RegisterDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UserDto> {
    return this.signIn(res, await this.auth.register(body, clientInfo(req)));
  }

  @Public()
  @RateLimit('login-ip', 'login-email')
  @Post('login')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Sign in with email and password (sets the session cookie)',
    description:
      'With two-factor sign-in on, answers 401 `two_factor_required` and sets ' +
      'a pending cookie (5 minutes) instead: complete the sign-in with POST ' +
      '/v1/auth/2fa/verify.',
  })
  @ApiOkResponse({ type: UserDto, headers: SETS_COOKIE })
  @ApiProblems(401)
  @UseGuards(LocalAuthGuard)
  @ApiBody({ type: LoginDto })
  async login(
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UserDto> {
    const outcome = await this.auth.signIn(
      req.credentials as LoginAccount,
      clientInfo(req),
    );
    if ('pending' in outcome) {
      setPendingSignInCookie(res, this.config, outcome.pending);
      throw secondFactorRequired(outcome.pending.expiresAt);
    }
    return this.signIn(res, outcome);
  }

  @Public()
  @RateLimit('forgot-ip', 'forgot-email')
  @Post('forgot-password')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Mail a password reset link (same answer whether or not the email has an account)',
  })
  @ApiAcceptedResponse({ type: MessageDto })
  forgotPassword(@Body() body: ForgotPasswordDto): MessageDto {
    this.resets.requestReset(body.email);
    return { message: FORGOT_PASSWORD_ANSWER };
  }

  @Public()
  @RateLimit('reset-ip')
  @Post('reset-password')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Set a new password with the token of a reset link; signs out every session',
  })
  @ApiNoContentResponse({
    description: 'Password changed; every session of the account has ended.',
  })
  async resetPassword(@Body() body: ResetPasswordDto): Promise<void> {
    await this.resets.resetPassword(body.token, body.password);
  }

  @Post('logout')
  @HttpCode(204)
  @ApiOperation({ summary: 'End this session and clear the cookie' })
  @ApiNoContentResponse({ description: 'Signed out.' })
  @ApiProblems(401)
  async logout(
    @CurrentUser() user: SessionUser,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    await this.auth.logout(user);
    res.clearCookie(
      this.config.session.cookieName,
      sessionCookieOptions(this.config),
    );
  }

  @Get('me')
  @ApiOperation({ summary: 'The signed-in user with their plan' })
  @ApiOkResponse({ type: UserDto })
  @ApiProblems(401)
  me(@CurrentUser() user: SessionUser): UserDto {
    return this.auth.me(user);
  }

  @RateLimit('password-user')
  @Post('change-password')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Change the password; every other session of the account ends, this one stays',
  })
  @ApiNoContentResponse({ description: 'Password changed.' })
  @ApiProblems(400, 401, 403, 409, 429)
  changePassword(
    @CurrentUser() user: SessionUser,
    @Body() body: ChangePasswordDto,
  ): Promise<void> {
    return this.auth.changePassword(user, body);
  }

  private signIn(res: Response, signedIn: SignedIn): UserDto {
    setSessionCookie(res, this.config, signedIn.session);
    return signedIn.user;
  }
}

/** The answer of a first factor that needs a second one: the client asks for a code and posts it to /2fa/verify. */
export function secondFactorRequired(expiresAt: Date): AppError {
  return new AppError(
    'two_factor_required',
    'Enter the code of your authenticator app (or a recovery code) to finish signing in.',
    {
      extensions: {
        next: '/v1/auth/2fa/verify',
        expiresAt: expiresAt.toISOString(),
      },
    },
  );
}
