import { Browser, Page } from 'playwright-core';
import { launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { uniqueEmail } from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

/**
 * The reference web client in a real Chromium against the real service (same origin, so its cookie and
 * CSRF rules are the production ones): a person's journey through the screens built so far.
 */
describe('the web client in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    // Slow enough that an answer can be watched streaming in, and stopped.
    t = await bootTestApp({ WEB_CLIENT: 'on', ECHO_DELAY_MS: '150' });
    base = await listen(t);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  });
  afterEach(async () => {
    await page.close();
  });

  it('signs up, streams an answer with its usage, stops a long one, signs out and back in', async () => {
    const email = uniqueEmail('browser');
    const password = 'a long enough browser password';
    await step(page, 'sign-up', async () => {
      await page.goto(`${base}/`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByRole('link', { name: 'Sign up' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByText(email).waitFor();
    });

    await step(page, 'chat-streams', async () => {
      await page.getByLabel('Model').selectOption('local/echo');
      await page
        .getByLabel('Message', { exact: true })
        .fill('hello from the browser');
      await page.getByRole('button', { name: 'Send' }).click();
      const answer = page.locator('.turn-assistant .text').last();
      // Seen part-way first (streamed), then whole, then its usage.
      await page
        .locator('.turn-assistant .text', { hasText: 'Echo:' })
        .waitFor();
      await page.locator('.turn-assistant .usage').last().waitFor();
      expect(await answer.textContent()).toBe('Echo: hello from the browser');
      expect(
        await page.locator('.turn-assistant .usage').last().textContent(),
      ).toMatch(/\d+ tokens in · \d+ out · \d+ credits/);
    });

    await step(page, 'chat-stop', async () => {
      const words = Array.from({ length: 40 }, (_, index) => `w${index}`).join(
        ' ',
      );
      await page.getByLabel('Message', { exact: true }).fill(words);
      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('.turn-assistant .text', { hasText: 'w1' }).waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.getByText('Stopped.').waitFor();
      const stopped =
        (await page.locator('.turn-assistant .text').last().textContent()) ??
        '';
      expect(stopped.length).toBeGreaterThan(0);
      expect(stopped).not.toContain('w39');
      await page.getByRole('button', { name: 'Send' }).waitFor();
    });

    await step(page, 'sign-out-and-in', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).not.toContain('{');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(email).waitFor();
    });
  }, 90_000);

  it('keeps a signed-in person signed in when the service fails or cannot be reached, and signs out only on a 401', async () => {
    const email = uniqueEmail('browser-outage');
    await step(page, 'outage-sign-up', async () => {
      await page.goto(`${base}/sign-up`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('a long enough browser password');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByText(email).waitFor();
    });

    await step(page, 'outage-500-and-network', async () => {
      for (const outage of ['500', 'network'] as const) {
        // GET /v1/auth/me fails as a broken service (500) or a dropped connection would.
        await page.route('**/v1/auth/me', (route) =>
          outage === '500'
            ? route.fulfill({
                status: 500,
                contentType: 'application/problem+json',
                body: JSON.stringify({
                  type: 'about:blank',
                  title: 'Internal Server Error',
                  status: 500,
                  code: 'internal_error',
                }),
              })
            : route.abort('connectionrefused'),
        );
        await page.reload();
        const alert = page.getByRole('alert');
        await alert.waitFor();
        expect(await alert.textContent()).toContain(
          outage === '500'
            ? 'could not be reached (it answered 500)'
            : 'could not be reached (the network failed)',
        );
        expect(
          await page.getByRole('heading', { name: 'Sign in' }).count(),
        ).toBe(0);
        await page.unroute('**/v1/auth/me');
        await page.getByRole('button', { name: 'Try again' }).click();
        await page.getByText(email).waitFor();
      }
    });

    await step(page, 'outage-401-signs-out', async () => {
      await page.context().clearCookies();
      await page.reload();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    });
  }, 90_000);
});
