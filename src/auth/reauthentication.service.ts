import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { UsersRepository } from '../users/users.repository';
import { PasswordHasher } from './password-hasher';
import { SessionUser } from './session-user';

/** How recent a sign-in must be to stand in for a password the account does not have. */
export const RECENT_SIGN_IN_MS = 10 * 60_000;

/**
 * The check before a sensitive change (2FA off, account deletion): the account's password, or, for an
 * account that signs in only through Google or GitHub, a sign-in of this session in the last 10 minutes.
 * Routes using it carry @RateLimit('password-user'), so a stolen session cannot guess the password.
 */
@Injectable()
export class ReauthenticationService {
  constructor(
    private readonly users: UsersRepository,
    private readonly passwords: PasswordHasher,
    private readonly clock: Clock,
  ) {}

  /** `password` as the body gave it: an optional field may also arrive as null, which is no password. */
  async confirm(
    user: SessionUser,
    password: string | null | undefined,
  ): Promise<void> {
    const hash = await this.users.findPasswordHash(user.id);
    if (hash !== null) {
      if (
        typeof password !== 'string' ||
        !(await this.passwords.verify(password, hash))
      )
        throw passwordIncorrect();
      return;
    }
    if (
      this.clock.now().getTime() - user.signedInAt.getTime() >
      RECENT_SIGN_IN_MS
    ) {
      throw new AppError(
        'reauthentication_required',
        'This account has no password: sign in again (with Google or GitHub), then retry within 10 minutes.',
      );
    }
  }

  /** No question asked within 10 minutes of this session's sign-in; after that, as `confirm`. */
  async confirmUnlessSignedInRecently(
    user: SessionUser,
    password: string | null | undefined,
  ): Promise<void> {
    if (
      this.clock.now().getTime() - user.signedInAt.getTime() <=
      RECENT_SIGN_IN_MS
    )
      return;
    await this.confirm(user, password);
  }
}

export function passwordIncorrect(): AppError {
  return new AppError('password_incorrect', 'The password is not correct.');
}
