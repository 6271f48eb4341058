import {
  CanActivate,
  ExecutionContext,
  Inject,
  mixin,
  Type,
} from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { Request } from 'express';
import { AuthorizationError } from 'passport-oauth2';
import { AppError } from '../../common/errors/app-error';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { OAuthAccount } from './identities.repository';
import { InternalSignInError, OAuthFailure } from './oauth-failure';
import { isConfigured, OAuthProviderName } from './oauth-providers';

/** What a callback came to: the account to sign in, or the code the web app is sent back with. */
export type OAuthOutcome =
  { account: OAuthAccount } | { failure: OAuthFailure['code'] };

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by the callback's OAuthGuard. */
    oauth?: OAuthOutcome;
  }
}

/**
 * Runs a provider's passport strategy on one of its two routes, with no passport session.
 * - start: passport redirects to the provider (the state store sets the state cookie); a provider's
 *   answer sent here instead of to the callback is a 400.
 * - callback: the outcome lands on `req.oauth`, failures included, since every failure is a redirect
 *   into the web app with `?error=`; only this service's own failures (database) are thrown.
 * An unconfigured provider is a 503 on both.
 */
export function OAuthGuard(
  provider: OAuthProviderName,
  step: 'start' | 'callback',
): Type<CanActivate> {
  class Guard extends AuthGuard(provider) {
    constructor(
      @Inject(APP_CONFIG) private readonly config: AppConfig,
      private readonly log: AppLogger,
    ) {
      super();
    }

    override async canActivate(context: ExecutionContext): Promise<boolean> {
      if (!isConfigured(this.config.oauth[provider]))
        throw new AppError(
          'provider_not_configured',
          `Sign-in with ${provider} is not configured on this server.`,
        );
      const req = context.switchToHttp().getRequest<Request>();
      const answered =
        req.query.code !== undefined || req.query.error !== undefined;
      if (step === 'start' && answered)
        throw new AppError(
          'bad_request',
          `The provider's answer goes to /v1/auth/${provider}/callback.`,
        );
      if (step === 'callback' && !answered) {
        // Without `code` or `error`, passport would start a new authorization from the callback.
        req.oauth = { failure: 'oauth_denied' };
        return true;
      }
      return (await super.canActivate(context)) as boolean;
    }

    override getAuthenticateOptions(): { session: boolean; property: string } {
      return { session: false, property: 'oauth' };
    }

    override handleRequest<T = OAuthOutcome>(
      error: unknown,
      account: OAuthAccount | false,
      info: unknown,
    ): T {
      return this.outcome(error, account, info) as T;
    }

    private outcome(
      error: unknown,
      account: OAuthAccount | false,
      info: unknown,
    ): OAuthOutcome {
      if (error instanceof InternalSignInError) throw error.cause;
      if (error instanceof OAuthFailure) return { failure: error.code };
      // The provider redirected back with an `error` other than access_denied.
      if (error instanceof AuthorizationError)
        return { failure: 'oauth_denied' };
      if (error) {
        this.log.warn({ provider, err: error }, 'oauth code exchange failed');
        return { failure: 'oauth_exchange_failed' };
      }
      if (account) return { account };
      // A failed state check, or the user refused (access_denied).
      return {
        failure: info instanceof OAuthFailure ? info.code : 'oauth_denied',
      };
    }
  }
  return mixin(Guard);
}
