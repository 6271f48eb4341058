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
import { SessionUser } from './session-user';
import { SessionsService } from './sessions.service';

/**
 * The global guard: every route needs a valid session unless it is marked @Public(). The caller is put
 * on `req.user` for @CurrentUser(). Nothing about the caller is taken from the request but the cookie.
 * A cached session is checked synchronously: Nest's loop over the guards awaits only a guard that answers
 * a promise.
 */
@Injectable()
export class SessionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: SessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (this.isPublic(context)) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const token = readCookie(
      req.headers.cookie,
      this.config.session.cookieName,
    );
    if (!token) return signInFirst();
    const user = this.sessions.authenticate(token);
    return user instanceof Promise
      ? user.then((loaded) => admit(req, loaded))
      : admit(req, user);
  }

  private isPublic(context: ExecutionContext): boolean {
    return (
      this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
        context.getHandler(),
        context.getClass(),
      ]) === true
    );
  }
}

function admit(req: Request, user: SessionUser | null): boolean {
  if (!user) return signInFirst();
  req.user = user;
  return true;
}

function signInFirst(): never {
  throw new AppError(
    'unauthenticated',
    'Sign in first: this endpoint needs a valid session cookie.',
  );
}
