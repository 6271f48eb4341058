import { Browser, Page } from 'playwright-core';
import { expectCount, launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { uniqueEmail } from './support/factories';
import {
  resetTokenOf,
  startFakeSmtp,
  verificationTokenOf,
} from './support/fake-smtp';
import { bootTestApp, TestApp } from './support/test-app';
import { totpCode } from './support/totp';

const VERIFY_SUBJECT = 'Verify your email address';
const RESET_SUBJECT = 'Reset your password';

/**
 * The account screens of the web client in a real Chromium against the real service, with mail caught by a
 * fake SMTP server: verification, password change and reset, two-factor sign-in, sessions, deletion.
 */
describe('the web client account screens in Chromium', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
  let base: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    smtp = await startFakeSmtp();
    t = await bootTestApp({ WEB_CLIENT: 'on', SMTP_URL: smtp.url });
    base = await listen(t);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  });
  afterEach(async () => {
    await page.close();
  });

  const section = (name: string) => page.getByRole('region', { name });

  async function signUp(email: string, password: string): Promise<void> {
    await page.goto(`${base}/sign-up`);
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByText(email).waitFor();
  }

  async function openAccount(): Promise<void> {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Account' })
      .click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
  }

  async function signOut(): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  }

  async function submitPassword(
    email: string,
    password: string,
  ): Promise<void> {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  it('verifies the email, changes the password, turns on two-factor sign-in, signs in with a code and a recovery code, ends a session', async () => {
    const email = uniqueEmail('web-account');
    const firstPassword = 'a long enough first password';
    const password = 'the changed account password';
    let secret = '';
    let recoveryCodes: string[] = [];

    await step(page, 'account-unverified', async () => {
      await signUp(email, firstPassword);
      await openAccount();
      await section('Email').getByText('Not verified').waitFor();
      await section('Email')
        .getByRole('button', { name: 'Resend verification email' })
        .click();
      await section('Email')
        .getByRole('status')
        .filter({ hasText: 'verification link was sent' })
        .waitFor();
    });

    await step(page, 'account-verify-email', async () => {
      const token = verificationTokenOf(
        await smtp.waitForMail(email, VERIFY_SUBJECT),
      );
      await page.goto(`${base}/verify-email?token=${token}`);
      await page.getByText('Your email address is verified.').waitFor();
      await page.getByRole('link', { name: 'Continue to the app' }).click();
      await openAccount();
      await section('Email').getByText('Verified', { exact: true }).waitFor();
      await expectCount(
        section('Email').getByRole('button', {
          name: 'Resend verification email',
        }),
        0,
      );
    });

    await step(page, 'account-change-password', async () => {
      const form = section('Password');
      await form.getByLabel('Current password').fill('not the password at all');
      await form.getByLabel('New password').fill(password);
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByRole('alert').waitFor();
      expect(await form.getByRole('alert').textContent()).not.toContain('{');
      await form.getByLabel('Current password').fill(firstPassword);
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByText('Your password was changed.').waitFor();
    });

    await step(page, 'account-two-factor-setup', async () => {
      const twoFactor = section('Two-factor sign-in');
      await twoFactor
        .getByRole('button', { name: 'Set up two-factor sign-in' })
        .click();
      await twoFactor
        .getByRole('img', { name: 'QR code for your authenticator app' })
        .waitFor();
      expect(await twoFactor.getByRole('img').getAttribute('src')).toMatch(
        /^data:image\/png;base64,/,
      );
      secret = await twoFactor.getByLabel('Secret key').inputValue();
      expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
      await twoFactor
        .getByLabel('Authentication code')
        .fill('000000' === totpCode(secret) ? '111111' : '000000');
      await twoFactor
        .getByRole('button', { name: 'Turn on two-factor sign-in' })
        .click();
      await twoFactor.getByRole('alert').waitFor();
      await twoFactor.getByLabel('Authentication code').fill(totpCode(secret));
      await twoFactor
        .getByRole('button', { name: 'Turn on two-factor sign-in' })
        .click();
      const codes = twoFactor
        .getByRole('list', { name: 'Recovery codes' })
        .getByRole('listitem');
      await codes.first().waitFor();
      recoveryCodes = (await codes.allTextContents()).map((code) =>
        code.trim(),
      );
      expect(recoveryCodes).toHaveLength(10);
      await twoFactor.getByText('They are shown only now.').waitFor();
      await twoFactor
        .getByRole('button', { name: 'I stored my recovery codes' })
        .click();
      await twoFactor.getByText('10 recovery codes left.').waitFor();
    });

    await step(page, 'sign-in-with-code', async () => {
      await signOut();
      await submitPassword(email, firstPassword);
      await page.getByRole('alert').waitFor();
      await submitPassword(email, password);
      await page
        .getByLabel('Authentication code')
        .fill(
          '000000' === totpCode(secret, Date.now(), 1) ? '111111' : '000000',
        );
      await page.getByRole('button', { name: 'Verify' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: 'not correct' })
        .waitFor();
      // The code of the next step: the one of this step was spent turning two-factor sign-in on.
      await page
        .getByLabel('Authentication code')
        .fill(totpCode(secret, Date.now(), 1));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByText(email).waitFor();
    });

    await step(page, 'sign-in-with-recovery-code', async () => {
      await signOut();
      await submitPassword(email, password);
      await page.getByLabel('Authentication code').waitFor();
      await page.getByRole('button', { name: 'Use a recovery code' }).click();
      await page.getByLabel('Recovery code').fill(recoveryCodes[0]);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByText(email).waitFor();
      await openAccount();
      await section('Two-factor sign-in')
        .getByText('9 recovery codes left.')
        .waitFor();
    });

    await step(page, 'second-step-after-provider-redirect', async () => {
      // As a Google or GitHub sign-in of this account does: the pending cookie set, then /?two_factor=required.
      await signOut();
      const login = await page.request.post(`${base}/v1/auth/login`, {
        data: { email, password },
      });
      expect(login.status()).toBe(401);
      await page.goto(`${base}/?two_factor=required`);
      await page.getByRole('button', { name: 'Use a recovery code' }).click();
      await page.getByLabel('Recovery code').fill(recoveryCodes[1]);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByText(email).waitFor();
    });

    await step(page, 'account-sessions', async () => {
      // Another device signs in (with its second factor).
      const other = t.http;
      const pending = await other
        .post('/v1/auth/login')
        .set(
          'User-Agent',
          'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1',
        )
        .send({ email, password })
        .expect(401);
      const pendingCookies = (
        pending.headers['set-cookie'] as unknown as string[]
      )
        .map((cookie) => cookie.split(';')[0])
        .join('; ');
      await other
        .post('/v1/auth/2fa/verify')
        .set('Cookie', pendingCookies)
        .set(
          'User-Agent',
          'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1',
        )
        .send({ recoveryCode: recoveryCodes[2] })
        .expect(200);

      await openAccount();
      const sessions = section('Sessions');
      const items = sessions.getByRole('listitem');
      await items.nth(1).waitFor();
      await expectCount(items, 2);
      const current = items.filter({ hasText: 'This device' });
      await expectCount(current, 1);
      await expectCount(current.getByRole('button', { name: 'End' }), 0);
      const phone = items.filter({ hasText: 'Safari on iOS' });
      await phone.getByText('Last seen').waitFor();
      await phone.getByRole('button', { name: 'End' }).click();
      await sessions.getByText('The session was ended.').waitFor();
      await expectCount(items, 1);
      await sessions.getByText('This device').waitFor();
    });

    await step(page, 'account-export-link', async () => {
      const link = section('Your data').getByRole('link', {
        name: 'Download your data',
      });
      expect(await link.getAttribute('href')).toBe('/v1/auth/me/export');
    });

    await step(page, 'account-two-factor-off', async () => {
      const twoFactor = section('Two-factor sign-in');
      await twoFactor.getByLabel('Password').fill(password);
      await twoFactor
        .getByLabel('Authentication or recovery code')
        .fill(recoveryCodes[3]);
      await twoFactor
        .getByRole('button', { name: 'Turn off two-factor sign-in' })
        .click();
      await twoFactor.getByText('Two-factor sign-in is off.').waitFor();
      await twoFactor
        .getByRole('button', { name: 'Set up two-factor sign-in' })
        .waitFor();
    });
  }, 90_000);

  it('resets a forgotten password through the mailed link, then deletes the account', async () => {
    const email = uniqueEmail('web-reset');
    const password = 'a long enough first password';
    const newPassword = 'the password after the reset';

    await step(page, 'forgot-password', async () => {
      await signUp(email, password);
      await signOut();
      await page.getByRole('link', { name: 'Forgot password?' }).click();
      await page
        .getByRole('heading', { name: 'Forgot your password?' })
        .waitFor();
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Send reset link' }).click();
      await page.getByText(`If an account exists for ${email}`).waitFor();
    });

    await step(page, 'reset-password', async () => {
      const token = resetTokenOf(await smtp.waitForMail(email, RESET_SUBJECT));
      await page.goto(`${base}/reset-password?token=${token}`);
      await page
        .getByRole('heading', { name: 'Choose a new password' })
        .waitFor();
      await page.getByLabel('New password').fill(newPassword);
      await page.getByRole('button', { name: 'Set new password' }).click();
      await page.getByText('Your password was changed.').waitFor();
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await submitPassword(email, password);
      await page.getByRole('alert').waitFor();
      await submitPassword(email, newPassword);
      await page.getByText(email).waitFor();
    });

    await step(page, 'reset-link-spent', async () => {
      const token = resetTokenOf(await smtp.waitForMail(email, RESET_SUBJECT));
      await page.goto(`${base}/reset-password?token=${token}`);
      await page.getByLabel('New password').fill('yet another long password');
      await page.getByRole('button', { name: 'Set new password' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).not.toContain('{');
      await page.goto(`${base}/account`);
    });

    await step(page, 'delete-account', async () => {
      await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
      const danger = section('Delete account');
      const remove = danger.getByRole('button', { name: 'Delete account' });
      await danger.getByLabel('Password').fill('not the password at all');
      expect(await remove.isDisabled()).toBe(true);
      await danger.getByLabel('Type DELETE to confirm').fill('DELETE');
      await remove.click();
      await danger.getByRole('alert').waitFor();
      await danger.getByLabel('Password').fill(newPassword);
      await remove.click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await submitPassword(email, newPassword);
      await page.getByRole('alert').waitFor();
      await expectCount(page.getByText(email), 0);
    });
  }, 90_000);
});
