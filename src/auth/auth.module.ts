import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { APP_GUARD } from '@nestjs/core';
import {
  AppThrottlerGuard,
  RateLimitGuard,
} from '../common/rate-limit/throttling';
import { UsersRepository } from '../users/users.repository';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { LocalAuthGuard, LocalStrategy } from './local.strategy';
import { IdentitiesRepository } from './oauth/identities.repository';
import { OAuthController } from './oauth/oauth.controller';
import { OAuthService } from './oauth/oauth.service';
import { oauthStrategies } from './oauth/oauth.strategies';
import { PasswordHasher } from './password-hasher';
import { PasswordResetService } from './password-reset.service';
import { PasswordResetsRepository } from './password-resets.repository';
import { SessionGuard } from './session.guard';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';
import { SessionsController } from './sessions.controller';
import { ReauthenticationService } from './reauthentication.service';
import { EmailVerificationController } from './email-verification/email-verification.controller';
import { EmailVerificationRepository } from './email-verification/email-verification.repository';
import { EmailVerificationService } from './email-verification/email-verification.service';
import { TwoFactorController } from './two-factor/two-factor.controller';
import { TwoFactorRepository } from './two-factor/two-factor.repository';
import { TwoFactorService } from './two-factor/two-factor.service';

@Module({
  imports: [PassportModule],
  controllers: [
    AuthController,
    OAuthController,
    EmailVerificationController,
    TwoFactorController,
    SessionsController,
  ],
  providers: [
    AuthService,
    LocalStrategy,
    LocalAuthGuard,
    OAuthService,
    ...oauthStrategies,
    IdentitiesRepository,
    PasswordResetService,
    PasswordResetsRepository,
    PasswordHasher,
    SessionsRepository,
    SessionsService,
    UsersRepository,
    EmailVerificationService,
    EmailVerificationRepository,
    TwoFactorService,
    TwoFactorRepository,
    ReauthenticationService,
    { provide: APP_GUARD, useClass: SessionGuard },
    AppThrottlerGuard,
    // After the session guard (global guards run in this order), so per-user limits know the user.
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  exports: [SessionsService, PasswordHasher, ReauthenticationService],
})
export class AuthModule {}
