import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { initialRole } from '../users/initial-role';
import { AppError } from '../common/errors/app-error';
import { toUserDto, UserDto } from '../users/dto/user.response';
import { UsersRepository } from '../users/users.repository';
import { RegisterDto } from './dto/credentials.dto';
import { PasswordHasher } from './password-hasher';
import { SessionUser } from './session-user';
import { SessionsService } from './sessions.service';

export interface ClientInfo {
  userAgent?: string;
  ip?: string;
}

export interface SignedIn {
  user: UserDto;
  session: { token: string; expiresAt: Date };
}

/** One answer for an unknown email, a wrong password and a disabled account: no account enumeration. */
const INVALID_CREDENTIALS = 'The email or password is not correct.';

/** The one answer for every failed sign-in. */
export function invalidCredentials(): AppError {
  return new AppError('invalid_credentials', INVALID_CREDENTIALS);
}

/** An account as sign-in reads it. */
export type LoginAccount = NonNullable<Awaited<ReturnType<UsersRepository['findLoginCandidate']>>>;

@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersRepository,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async register(input: RegisterDto, client: ClientInfo): Promise<SignedIn> {
    const created = await this.users.createUserUnlessEmailTaken(input.email, await this.passwords.hash(input.password), initialRole(this.config, input.email));
    if (!created) throw new AppError('email_taken', 'An account with this email already exists.');
    return { user: toUserDto(created), session: await this.sessions.start(created.id, client) };
  }

  /**
   * The account these credentials open (passport-local's verify step), or the same 401 for every failure:
   * unknown email (a dummy bcrypt comparison runs so it takes as long), wrong password, disabled account.
   */
  async verifyCredentials(email: string, password: string): Promise<LoginAccount> {
    const candidate = await this.users.findLoginCandidate(email);
    const passwordMatches = await this.passwords.verify(password, candidate?.passwordHash ?? null);
    if (!candidate || !passwordMatches || candidate.disabledAt) throw invalidCredentials();
    return candidate;
  }

  /** Signs in an account whose credentials were verified. */
  async startSession(account: LoginAccount, client: ClientInfo): Promise<SignedIn> {
    return { user: toUserDto(account), session: await this.sessions.start(account.id, client) };
  }

  logout(user: SessionUser): Promise<void> {
    return this.sessions.end(user);
  }

  /** From the session as cached (see SessionsService): no database round trip. */
  me(user: SessionUser): UserDto {
    return toUserDto({ id: user.id, email: user.email, role: user.role, createdAt: user.createdAt, plan: { code: user.planCode, name: user.planName } });
  }
}
