import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { AppError } from '../../common/errors/app-error';
import { newSecretToken, sha256Hex } from '../../common/hashing';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { MailService } from '../../infra/mail/mail.service';
import { SessionUser } from '../session-user';
import { SessionsService } from '../sessions.service';
import { EmailVerificationRepository } from './email-verification.repository';

export const VERIFICATION_TOKEN_TTL_MS = 24 * 3_600_000;

/**
 * Proof that the owner of an account reads its mailbox: a single-use link (256-bit token, only its hash
 * stored, 24 hours, bound to the address it was sent to). Verifying also applies ADMIN_EMAILS, which
 * never trusts an address that was not proved.
 */
@Injectable()
export class EmailVerificationService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly verifications: EmailVerificationRepository,
    private readonly sessions: SessionsService,
    private readonly mail: MailService,
    private readonly clock: Clock,
    private readonly log: AppLogger,
  ) {}

  /** After sign-up: the mail goes in the background; the sign-up does not wait for SMTP. */
  sendAfterSignUp(account: { id: string; email: string }): void {
    void this.sendLink(account).catch((error: unknown) =>
      this.log.error({ err: error }, 'verification mail failed'),
    );
  }

  async resend(user: SessionUser): Promise<void> {
    if (await this.verifications.isVerified(user.id))
      throw new AppError(
        'email_already_verified',
        'This email address is already verified.',
      );
    try {
      await this.sendLink(user);
    } catch (error) {
      this.log.error({ err: error }, 'verification mail failed');
      throw new AppError(
        'service_unavailable',
        'The verification mail could not be sent right now; try again in a few minutes.',
        { headers: { 'Retry-After': '60' } },
      );
    }
  }

  async verify(token: string): Promise<void> {
    const userId = await this.verifications.consumeToken(
      sha256Hex(token),
      this.config.adminEmails,
      this.clock.now(),
    );
    if (!userId)
      throw new AppError(
        'invalid_verification_token',
        'This verification link is not valid: it may have expired, been used already, or belong to an older address.',
      );
    // Every instance hears of it from the database; this one applies it before answering.
    this.sessions.forgetUser(userId);
  }

  private async sendLink(account: {
    id: string;
    email: string;
  }): Promise<void> {
    const { token, hash } = newSecretToken();
    await this.verifications.createToken(
      account.id,
      account.email,
      hash,
      new Date(this.clock.now().getTime() + VERIFICATION_TOKEN_TTL_MS),
    );
    // Built from APP_URL only: a forged Host header cannot send the token to another site.
    const link = `${this.config.appUrl}/verify-email?token=${encodeURIComponent(token)}`;
    await this.mail.send({
      to: account.email,
      subject: 'Verify your email address',
      text:
        `Please confirm that this address belongs to your account by opening ` +
        `this link within 24 hours:\n${link}\n\nIf you did not create an ` +
        `account, ignore this mail.\n`,
    });
  }
}
