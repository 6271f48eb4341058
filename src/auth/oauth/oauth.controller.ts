import {
  Controller,
  createParamDecorator,
  ExecutionContext,
  Get,
  Inject,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { Public } from '../../common/decorators/public.decorator';
import { ApiProblems } from '../../common/openapi/api-problems.decorator';
import { ApiRedirectResponse } from '../../common/openapi/api-redirect.decorator';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import {
  sessionCookieOptions,
  setPendingSignInCookie,
  setSessionCookie,
} from '../cookies';
import { clientInfo } from '../client-info';
import { OAuthProviderName } from './oauth-providers';
import { stateCookie } from './oauth-state.store';
import { OAuthGuard, OAuthOutcome } from './oauth.guard';
import { OAuthService } from './oauth.service';

/** The outcome OAuthGuard left on the request. */
const Outcome = createParamDecorator(
  (_: unknown, context: ExecutionContext): OAuthOutcome =>
    context.switchToHttp().getRequest<Request>().oauth!,
);

const CALLBACK_REDIRECT =
  'Redirect to APP_URL: signed in (session cookie set); or, with two-factor ' +
  'sign-in on, to APP_URL/?two_factor=required with a pending cookie (finish ' +
  'with POST /v1/auth/2fa/verify); or with an `error` query parameter.';

/** The sign-in routes: passport's strategies do the protocol in the guards; the handlers answer the browser. */
@Public()
@ApiTags('auth')
@Controller('auth')
export class OAuthController {
  constructor(
    private readonly oauth: OAuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('google')
  @UseGuards(OAuthGuard('google', 'start'))
  @ApiOperation({
    summary:
      'Start signing in with Google (redirect; state and PKCE bound to this browser)',
  })
  @ApiRedirectResponse('Redirect to Google.')
  @ApiProblems(400, 503)
  startGoogle(): void {
    // passport has answered with the redirect to Google.
  }

  @Get('google/callback')
  @UseGuards(OAuthGuard('google', 'callback'))
  @ApiOperation({
    summary:
      'Google callback: signs in and redirects into the app (or to the app with ?error=...)',
  })
  @ApiRedirectResponse(CALLBACK_REDIRECT)
  @ApiProblems(503)
  googleCallback(
    @Outcome() outcome: OAuthOutcome,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.complete('google', outcome, req, res);
  }

  @Get('github')
  @UseGuards(OAuthGuard('github', 'start'))
  @ApiOperation({
    summary:
      'Start signing in with GitHub (redirect; state bound to this browser)',
  })
  @ApiRedirectResponse('Redirect to GitHub.')
  @ApiProblems(400, 503)
  startGithub(): void {
    // passport has answered with the redirect to GitHub.
  }

  @Get('github/callback')
  @UseGuards(OAuthGuard('github', 'callback'))
  @ApiOperation({
    summary:
      'GitHub callback: signs in and redirects into the app (or to the app with ?error=...)',
  })
  @ApiRedirectResponse(CALLBACK_REDIRECT)
  @ApiProblems(503)
  githubCallback(
    @Outcome() outcome: OAuthOutcome,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.complete('github', outcome, req, res);
  }

  /** The state cookie is spent either way; a failure goes back to the web app as `?error=<code>`. */
  private async complete(
    provider: OAuthProviderName,
    outcome: OAuthOutcome,
    req: Request,
    res: Response,
  ): Promise<void> {
    const state = stateCookie(provider, sessionCookieOptions(this.config));
    res.clearCookie(state.name, state.options);
    if ('failure' in outcome)
      return res.redirect(
        302,
        `${this.config.appUrl}/?error=${outcome.failure}`,
      );
    const started = await this.oauth.startSession(
      outcome.account,
      clientInfo(req),
    );
    if ('pending' in started) {
      // The web app asks for the code and completes the sign-in with POST /v1/auth/2fa/verify.
      setPendingSignInCookie(res, this.config, started.pending);
      return res.redirect(302, `${this.config.appUrl}/?two_factor=required`);
    }
    setSessionCookie(res, this.config, started.session);
    res.redirect(302, `${this.config.appUrl}/`);
  }
}
