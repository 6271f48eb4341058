import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { Public } from '../../common/decorators/public.decorator';
import { ApiProblems } from '../../common/openapi/api-problems.decorator';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { readRawCookie, sessionCookieOptions } from '../cookies';
import { OAuthProviderName } from './oauth-providers';
import { OAUTH_STATE_TTL_MS } from './oauth-state';
import { CallbackQuery, OAuthFailure, OAuthService } from './oauth.service';

@Public()
@ApiTags('auth')
@Controller('auth')
export class OAuthController {
  constructor(
    private readonly oauth: OAuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('google')
  @ApiOperation({ summary: 'Start signing in with Google (redirect; state and PKCE bound to this browser)' })
  @ApiFoundResponse({ description: 'Redirect to Google.' })
  @ApiProblems(503)
  startGoogle(@Res() res: Response): void {
    this.redirectToProvider('google', res);
  }

  @Get('google/callback')
  @ApiOperation({ summary: 'Google callback: signs in and redirects into the app (or to the app with ?error=...)' })
  @ApiFoundResponse({ description: 'Redirect to APP_URL: signed in (session cookie set), or with an `error` query parameter.' })
  @ApiProblems(503)
  googleCallback(@Query() query: CallbackQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.completeSignIn('google', query, req, res);
  }

  @Get('github')
  @ApiOperation({ summary: 'Start signing in with GitHub (redirect; state bound to this browser)' })
  @ApiFoundResponse({ description: 'Redirect to GitHub.' })
  @ApiProblems(503)
  startGithub(@Res() res: Response): void {
    this.redirectToProvider('github', res);
  }

  @Get('github/callback')
  @ApiOperation({ summary: 'GitHub callback: signs in and redirects into the app (or to the app with ?error=...)' })
  @ApiFoundResponse({ description: 'Redirect to APP_URL: signed in (session cookie set), or with an `error` query parameter.' })
  @ApiProblems(503)
  githubCallback(@Query() query: CallbackQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.completeSignIn('github', query, req, res);
  }

  private redirectToProvider(provider: OAuthProviderName, res: Response): void {
    const { url, sealedState } = this.oauth.start(provider);
    res.cookie(stateCookieName(provider), sealedState, { ...this.stateCookieOptions(provider), maxAge: OAUTH_STATE_TTL_MS });
    res.redirect(302, url);
  }

  private async completeSignIn(provider: OAuthProviderName, query: CallbackQuery, req: Request, res: Response): Promise<void> {
    const sealedState = readRawCookie(req.headers.cookie, stateCookieName(provider));
    res.clearCookie(stateCookieName(provider), this.stateCookieOptions(provider));
    try {
      const session = await this.oauth.finish(provider, query, sealedState, { userAgent: req.headers['user-agent'], ip: req.ip });
      res.cookie(this.config.session.cookieName, session.token, sessionCookieOptions(this.config, session.expiresAt));
      res.redirect(302, `${this.config.appUrl}/`);
    } catch (error) {
      if (!(error instanceof OAuthFailure)) throw error;
      res.redirect(302, `${this.config.appUrl}/?error=${error.code}`);
    }
  }

  /** The state cookie goes only to this provider's routes, and lives ten minutes. */
  private stateCookieOptions(provider: OAuthProviderName) {
    return { ...sessionCookieOptions(this.config), path: `/v1/auth/${provider}` };
  }
}

function stateCookieName(provider: OAuthProviderName): string {
  return `oauth_${provider}`;
}
