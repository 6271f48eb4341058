import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './service-process';

export interface CapturedMail {
  to: string[];
  raw: string;
}

/** A real SMTP server on loopback that keeps every message it receives. */
export async function startFakeSmtp(): Promise<{
  url: string;
  mails: CapturedMail[];
  waitForMail: (to: string, subject?: string) => Promise<CapturedMail>;
  close: () => Promise<void>;
}> {
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        mails.push({
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
        });
        done();
      });
    },
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /** The first mail to `to` (with this subject, when given: sign-up also sends a verification mail). */
    waitForMail: async (to, subject) => {
      const matches = (mail: CapturedMail) =>
        mail.to.includes(to) &&
        (subject === undefined || mail.raw.includes(`Subject: ${subject}`));
      await waitFor(
        () => mails.some(matches),
        10_000,
        () => `no mail to ${to}${subject ? ` with subject ${subject}` : ''}`,
      );
      return mails.find(matches)!;
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
}

/** The reset token of the link in a mail (quoted-printable soft line breaks undone). */
export function resetTokenOf(mail: CapturedMail): string {
  const text = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const match = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match) throw new Error(`no reset link in:\n${mail.raw}`);
  return match[1];
}

/** The token of the verification link in a mail. */
export function verificationTokenOf(mail: CapturedMail): string {
  const text = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const match = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match) throw new Error(`no verification link in:\n${mail.raw}`);
  return match[1];
}
