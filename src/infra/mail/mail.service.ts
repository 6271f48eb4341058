import { Inject, Injectable } from '@nestjs/common';
import nodemailer, { Transporter } from 'nodemailer';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/**
 * Sends mail through SMTP_URL. Without it (development) the mail is written to the log instead, so the
 * reset link can be followed; in production without SMTP only the recipient and subject are logged,
 * because mails carry secrets (reset tokens) that logs must not.
 */
@Injectable()
export class MailService {
  private readonly transport: Transporter | null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {
    this.transport = config.mail.smtpUrl
      ? nodemailer.createTransport(config.mail.smtpUrl)
      : null;
  }

  async send(mail: Mail): Promise<void> {
    if (this.transport) {
      await this.transport.sendMail({
        from: this.config.mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
      });
      return;
    }
    if (this.config.env === 'production') {
      this.log.warn(
        { subject: mail.subject },
        'SMTP_URL is not set: mail not sent',
      );
      return;
    }
    this.log.info(
      { mail: { to: mail.to, subject: mail.subject, body: mail.text } },
      'SMTP_URL is not set: mail written to the log instead of sent',
    );
  }
}
