import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { Public } from '../common/decorators/public.decorator';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { UserDto } from '../users/dto/user.response';
import { AuthService, ClientInfo, SignedIn } from './auth.service';
import { sessionCookieOptions } from './cookies';
import { CurrentUser } from './current-user.decorator';
import { LoginDto, RegisterDto } from './dto/credentials.dto';
import { SessionUser } from './session-user';

const SETS_COOKIE = { 'Set-Cookie': { description: 'The session cookie (httpOnly, SameSite=Lax, Path=/, Secure over https).', schema: { type: 'string' as const } } };

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Public()
  @RateLimit({ name: 'register-ip', by: 'ip' })
  @Post('register')
  @ApiOperation({ summary: 'Create an account and sign in' })
  @ApiCreatedResponse({ type: UserDto, headers: SETS_COOKIE })
  @ApiProblems(409)
  async register(@Body() body: RegisterDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<UserDto> {
    return this.signIn(res, await this.auth.register(body, clientInfo(req)));
  }

  @Public()
  @RateLimit({ name: 'login-ip', by: 'ip' }, { name: 'login-email', by: 'email' })
  @Post('login')
  @HttpCode(200)
  @ApiOperation({ summary: 'Sign in with email and password (sets the session cookie)' })
  @ApiOkResponse({ type: UserDto, headers: SETS_COOKIE })
  @ApiProblems(401)
  async login(@Body() body: LoginDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<UserDto> {
    return this.signIn(res, await this.auth.login(body, clientInfo(req)));
  }

  @Post('logout')
  @HttpCode(204)
  @ApiOperation({ summary: 'End this session and clear the cookie' })
  @ApiNoContentResponse({ description: 'Signed out.' })
  @ApiProblems(401)
  async logout(@CurrentUser() user: SessionUser, @Res({ passthrough: true }) res: Response): Promise<void> {
    await this.auth.logout(user);
    res.clearCookie(this.config.session.cookieName, sessionCookieOptions(this.config));
  }

  @Get('me')
  @ApiOperation({ summary: 'The signed-in user with their plan' })
  @ApiOkResponse({ type: UserDto })
  @ApiProblems(401)
  me(@CurrentUser() user: SessionUser): Promise<UserDto> {
    return this.auth.me(user);
  }

  private signIn(res: Response, signedIn: SignedIn): UserDto {
    res.cookie(this.config.session.cookieName, signedIn.session.token, sessionCookieOptions(this.config, signedIn.session.expiresAt));
    return signedIn.user;
  }
}

function clientInfo(req: Request): ClientInfo {
  const userAgent = req.headers['user-agent'];
  return { userAgent: typeof userAgent === 'string' ? userAgent : undefined, ip: req.ip };
}
