import { ExecutionContext, Injectable } from '@nestjs/common';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import { Request } from 'express';
import { Strategy } from 'passport-local';
import { createValidationPipe } from '../common/validation/validation.pipe';
import { AuthService, invalidCredentials, LoginAccount } from './auth.service';
import { LoginDto } from './dto/credentials.dto';

declare module 'express-serve-static-core' {
  interface Request {
    /** The account passport-local verified (POST /v1/auth/login); `user` stays the session's. */
    credentials?: LoginAccount;
  }
}

/** passport-local: the email and password of the body, checked by AuthService. No passport session. */
@Injectable()
export class LocalStrategy extends PassportStrategy(Strategy, 'local') {
  constructor(private readonly auth: AuthService) {
    super({
      usernameField: 'email',
      passwordField: 'password',
      session: false,
    });
  }

  validate(email: string, password: string): Promise<LoginAccount> {
    return this.auth.verifyCredentials(email, password);
  }
}

/**
 * Runs passport-local after the body passed the same validation as every route (400 naming the field,
 * email normalised), since guards run before pipes; every failure is the one 401 of AuthService.
 */
@Injectable()
export class LocalAuthGuard extends AuthGuard('local') {
  private readonly pipe = createValidationPipe();

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    req.body = (await this.pipe.transform(req.body, {
      type: 'body',
      metatype: LoginDto,
    })) as LoginDto;
    return (await super.canActivate(context)) as boolean;
  }

  override getAuthenticateOptions(): { session: boolean; property: string } {
    return { session: false, property: 'credentials' };
  }

  /** `error` is what LocalStrategy.validate rejected with (AuthService's errors), null when it resolved. */
  override handleRequest<T = LoginAccount>(
    error: Error | null,
    account: T | false,
  ): T {
    if (error) throw error;
    if (!account) throw invalidCredentials();
    return account;
  }
}
