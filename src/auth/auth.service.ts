import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { initialRole } from '../users/initial-role';
import { AppError } from '../common/errors/app-error';
import { toUserDto, UserDto } from '../users/dto/user.response';
import { UsersRepository } from '../users/users.repository';
import { ChangePasswordDto, RegisterDto } from './dto/credentials.dto';
import { passwordIncorrect } from './reauthentication.service';
import { Clock } from '../common/clock';
import { PasswordHasher } from './password-hasher';
import { SessionUser } from './session-user';
import { SessionsService } from './sessions.service';
import { EmailVerificationService } from './email-verification/email-verification.service';
import {
  PendingSignIn,
  SecondFactor,
  TwoFactorService,
} from './two-factor/two-factor.service';

export interface ClientInfo {
  userAgent?: string;
  ip?: string;
}

export interface SignedIn {
  user: UserDto;
  session: { token: string; expiresAt: Date };
}

/** What a first factor leads to: a session, or (2FA on) a sign-in waiting for its second factor. */
export type SignInOutcome = SignedIn | { pending: PendingSignIn };

/** One answer for an unknown email, a wrong password and a disabled account: no account enumeration. */
const INVALID_CREDENTIALS = 'The email or password is not correct.';

/** The one answer for every failed sign-in. */
export function invalidCredentials(): AppError {
  return new AppError('invalid_credentials', INVALID_CREDENTIALS);
}

/** An account as sign-in reads it. */
export type LoginAccount = NonNullable<
  Awaited<ReturnType<UsersRepository['findLoginCandidate']>>
>;

@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersRepository,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly twoFactor: TwoFactorService,
    private readonly verification: EmailVerificationService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A password sign-up proves nothing about the mailbox: it starts unverified, with a link on its way. */
  async register(input: RegisterDto, client: ClientInfo): Promise<SignedIn> {
    const created = await this.users.createUserUnlessEmailTaken(
      input.email,
      await this.passwords.hash(input.password),
      initialRole(this.config, input.email, false),
    );
    if (!created)
      throw new AppError(
        'email_taken',
        'An account with this email already exists.',
      );
    const signedIn = {
      user: toUserDto(created),
      session: await this.sessions.start(created.id, client),
    };
    this.verification.sendAfterSignUp(created);
    return signedIn;
  }

  /**
   * The account these credentials open (passport-local's verify step), or the same 401 for every failure:
   * unknown email (a dummy bcrypt comparison runs so it takes as long), wrong password, disabled account.
   */
  async verifyCredentials(
    email: string,
    password: string,
  ): Promise<LoginAccount> {
    const candidate = await this.users.findLoginCandidate(email);
    const passwordMatches = await this.passwords.verify(
      password,
      candidate?.passwordHash ?? null,
    );
    if (!candidate || !passwordMatches || candidate.disabledAt)
      throw invalidCredentials();
    return candidate;
  }

  /** Signs in an account whose password was verified, or, with 2FA on, starts waiting for the second factor. */
  async signIn(
    account: LoginAccount,
    client: ClientInfo,
  ): Promise<SignInOutcome> {
    if (account.totpEnabledAt)
      return { pending: await this.twoFactor.beginSignIn(account.id) };
    return {
      user: toUserDto(account),
      session: await this.sessions.start(account.id, client),
    };
  }

  /** The second factor of a pending sign-in (its cookie's token): the session it completes. */
  async completeSignIn(
    pendingToken: string | null,
    factor: SecondFactor,
    client: ClientInfo,
  ): Promise<SignedIn> {
    const userId = await this.twoFactor.completeSignIn(pendingToken, factor);
    const user = await this.users.findPublicUser(userId);
    if (!user) throw invalidCredentials();
    return {
      user: toUserDto(user),
      session: await this.sessions.start(userId, client),
    };
  }

  async changePassword(
    user: SessionUser,
    input: ChangePasswordDto,
  ): Promise<void> {
    const hash = await this.users.findPasswordHash(user.id);
    if (hash === null)
      throw new AppError(
        'no_password',
        'This account signs in with Google or GitHub and has no password yet: set one through forgot-password.',
      );
    if (!(await this.passwords.verify(input.currentPassword, hash)))
      throw passwordIncorrect();
    const replaced = await this.users.replacePassword(
      user.id,
      hash,
      await this.passwords.hash(input.newPassword),
      user.sessionTokenHash,
      this.clock.now(),
    );
    if (!replaced) throw passwordIncorrect();
    // The other sessions are gone from the database; this instance drops its copies before answering.
    this.sessions.forgetUser(user.id);
  }

  logout(user: SessionUser): Promise<void> {
    return this.sessions.end(user);
  }

  /** From the session as cached (see SessionsService): no database round trip. */
  me(user: SessionUser): UserDto {
    return {
      id: user.id,
      email: user.email,
      role: user.role,
      plan: { code: user.planCode, name: user.planName },
      emailVerified: user.emailVerified,
      twoFactorEnabled: user.twoFactorEnabled,
      createdAt: user.createdAt.toISOString(),
    };
  }
}
