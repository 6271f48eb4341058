import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { UsersRepository } from '../users/users.repository';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { IdentitiesRepository } from './oauth/identities.repository';
import { OAuthController } from './oauth/oauth.controller';
import { OAuthService } from './oauth/oauth.service';
import { PasswordHasher } from './password-hasher';
import { PasswordResetService } from './password-reset.service';
import { PasswordResetsRepository } from './password-resets.repository';
import { SessionGuard } from './session.guard';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';

@Module({
  controllers: [AuthController, OAuthController],
  providers: [
    AuthService,
    OAuthService,
    IdentitiesRepository,
    PasswordResetService,
    PasswordResetsRepository,
    PasswordHasher,
    SessionsRepository,
    SessionsService,
    UsersRepository,
    { provide: APP_GUARD, useClass: SessionGuard },
  ],
  exports: [SessionsService],
})
export class AuthModule {}
