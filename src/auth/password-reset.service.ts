import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { newSecretToken, sha256Hex } from '../common/hashing';
import { AppError } from '../common/errors/app-error';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MailService } from '../infra/mail/mail.service';
import { PasswordHasher } from './password-hasher';
import { PasswordResetsRepository } from './password-resets.repository';

export const RESET_TOKEN_TTL_MS = 30 * 60_000;

@Injectable()
export class PasswordResetService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly resets: PasswordResetsRepository,
    private readonly passwords: PasswordHasher,
    private readonly mail: MailService,
    private readonly log: AppLogger,
    private readonly clock: Clock,
  ) {}

  /**
   * Answers at once, the same way whether or not the email has an account: the token and the mail are
   * made in the background, so neither the answer nor its timing tells anything.
   */
  requestReset(email: string): void {
    void this.sendResetMail(email).catch((error: unknown) =>
      this.log.error({ err: error }, 'password reset mail failed'),
    );
  }

  async resetPassword(token: string, password: string): Promise<void> {
    const passwordHash = await this.passwords.hash(password);
    const done = await this.resets.resetPasswordWithToken(
      sha256Hex(token),
      passwordHash,
      this.clock.now(),
    );
    if (!done)
      throw new AppError(
        'invalid_reset_token',
        'This reset link is not valid: it may have expired or been used already.',
      );
  }

  private async sendResetMail(email: string): Promise<void> {
    const user = await this.resets.findUserIdByEmail(email);
    if (!user || user.disabledAt) return;
    const { token, hash } = newSecretToken();
    await this.resets.createResetToken(
      user.id,
      hash,
      new Date(this.clock.now().getTime() + RESET_TOKEN_TTL_MS),
    );
    // Built from APP_URL only: a forged Host header cannot send users to another site with their token.
    const link = `${this.config.appUrl}/reset-password?token=${encodeURIComponent(token)}`;
    await this.mail.send({
      to: email,
      subject: 'Reset your password',
      text:
        `Someone asked to reset the password of your account.\n\nTo choose a ` +
        `new password, open this link within 30 minutes:\n${link}\n\nIf it was ` +
        `not you, ignore this mail: your password stays as it is.\n`,
    });
  }
}
