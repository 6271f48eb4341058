import {
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Request } from 'express';
import { IS_PUBLIC } from '../common/decorators/public.decorator';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { readCookie } from './cookies';
import { SessionsService } from './sessions.service';

/**
 * The global guard: every route needs a valid session unless it is marked @Public(). The caller is put
 * on `req.user` for @CurrentUser(). Nothing about the caller is taken from the request but the cookie.
 */
@Injectable()
export class SessionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: SessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (
      this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
        context.getHandler(),
        context.getClass(),
      ])
    )
      return true;
    const req = context.switchToHttp().getRequest<Request>();
    const token = readCookie(
      req.headers.cookie,
      this.config.session.cookieName,
    );
    const user = token ? await this.sessions.authenticate(token) : null;
    if (!user)
      throw new AppError(
        'unauthenticated',
        'Sign in first: this endpoint needs a valid session cookie.',
      );
    req.user = user;
    return true;
  }
}
