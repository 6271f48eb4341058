import {
  applyDecorators,
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { Request } from 'express';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

/**
 * With REQUIRE_EMAIL_VERIFICATION, what costs money or buys it (chat, Skill runs, checkout) waits until the
 * account proved its email. Runs after the session guard, so the caller is known.
 */
@Injectable()
export class VerifiedEmailGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    if (!this.config.requireEmailVerification) return true;
    const user = context.switchToHttp().getRequest<Request>().user;
    if (user && !user.emailVerified) {
      throw new AppError(
        'email_unverified',
        'Verify your email address first: follow the link we mailed you, or ask for a new one with POST /v1/auth/resend-verification.',
      );
    }
    return true;
  }
}

export function VerifiedEmailRequired(): MethodDecorator & ClassDecorator {
  return applyDecorators(UseGuards(VerifiedEmailGuard));
}
