import { Browser, Page } from 'playwright-core';
import { launchChromium, step } from './support/browser';
import { billingEnv } from './support/billing';
import { listen } from './support/chat-client';
import { uniqueEmail } from './support/factories';
import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import { bootTestApp, extractionEnv, TestApp } from './support/test-app';

/**
 * One person's whole journey through the reference web client, in Chromium against the real service and the
 * loopback payment fakes: sign up, a streamed answer and a stopped one, a file uploaded and attached, a Skill
 * created and run, a plan checked out at the provider, the account deleted.
 */
describe('the web client: a whole journey in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let stripe: FakeStripe;
  let paddle: FakePaddle;

  beforeAll(async () => {
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    t = await bootTestApp({
      WEB_CLIENT: 'on',
      ECHO_DELAY_MS: '100',
      ...extractionEnv(),
      ...billingEnv(stripe, paddle),
    });
    base = await listen(t);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await Promise.all([stripe?.close(), paddle?.close()]);
  });

  const message = () => page.getByLabel('Message', { exact: true });
  const lastAnswer = () => page.locator('.turn-assistant .text').last();

  it('signs up, chats and stops, attaches a file, runs a Skill, checks out a plan and deletes the account', async () => {
    const email = uniqueEmail('journey');
    const password = 'the whole journey password';

    await step(page, 'journey-sign-up', async () => {
      await page.goto(`${base}/sign-up`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByText(email).waitFor();
    });

    await step(page, 'journey-chat-and-stop', async () => {
      await page.getByLabel('Model').selectOption('local/echo');
      await message().fill('good morning');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('.turn-assistant .usage').last().waitFor();
      expect(await lastAnswer().textContent()).toBe('Echo: good morning');
      await message().fill(
        Array.from({ length: 40 }, (_, index) => `w${index}`).join(' '),
      );
      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('.turn-assistant .text', { hasText: 'w1' }).waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.getByText('Stopped.').waitFor();
      expect(await lastAnswer().textContent()).not.toContain('w39');
    });

    await step(page, 'journey-upload', async () => {
      await page.getByRole('link', { name: 'Files' }).click();
      await page.getByLabel('Upload a file').setInputFiles({
        name: 'brief.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('The meeting is on Thursday.'),
      });
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      await page
        .getByRole('listitem')
        .filter({ hasText: 'brief.txt' })
        .getByText(/Text: ready/)
        .waitFor({ timeout: 30_000 });
    });

    await step(page, 'journey-attach', async () => {
      await page.getByRole('link', { name: 'Chat' }).click();
      await page.locator('summary', { hasText: 'Attach files' }).click();
      await page
        .getByRole('group', { name: 'Attach files' })
        .getByLabel('brief.txt')
        .check();
      await page.getByLabel('Model').selectOption('local/echo');
      await message().fill('when is the meeting');
      await page.getByRole('button', { name: 'Send' }).click();
      await page
        .locator('.turn-user .attached-files', { hasText: 'brief.txt' })
        .waitFor();
      await page
        .locator('.turn-assistant .text', {
          hasText: 'Echo: when is the meeting',
        })
        .waitFor();
    });

    await step(page, 'journey-skill', async () => {
      await page.getByRole('link', { name: 'Skills' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Summarizer');
      await page
        .getByRole('textbox', { name: 'Instruction', exact: true })
        .fill('Summarize the text.');
      await page.getByLabel('Input schema (JSON)').fill(
        JSON.stringify({
          type: 'object',
          properties: { text: { type: 'string', title: 'Text' } },
          required: ['text'],
        }),
      );
      await page.getByRole('button', { name: 'Create Skill' }).click();
      await page
        .getByRole('heading', { name: 'Summarizer', level: 2 })
        .waitFor();
      await page
        .getByRole('textbox', { name: 'Text (required)' })
        .fill('a long story');
      await page.getByLabel('Model').selectOption('local/echo');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      const answer = page.getByRole('region', { name: 'Answer' });
      await answer.locator('.usage').waitFor();
      expect(await answer.locator('.text').textContent()).toBe(
        'Echo: {"text":"a long story"}',
      );
    });

    await step(page, 'journey-checkout', async () => {
      await page.route('https://checkout.stripe.test/**', (route) =>
        route.fulfill({
          status: 200,
          contentType: 'text/html',
          body: '<!doctype html><title>Fake Stripe checkout</title><h1>Pay</h1>',
        }),
      );
      await page.getByRole('link', { name: 'Plans' }).click();
      const pro = page
        .getByRole('listitem')
        .filter({ has: page.getByRole('heading', { name: 'Pro', level: 2 }) });
      await pro.getByRole('button', { name: 'Subscribe with Stripe' }).click();
      await page.waitForURL(/^https:\/\/checkout\.stripe\.test\//);
      expect(stripe.creations().length).toBe(1);
    });

    await step(page, 'journey-delete-account', async () => {
      await page.goto(`${base}/account`);
      const danger = page.getByRole('region', { name: 'Delete account' });
      await danger.getByLabel('Password').fill(password);
      await danger.getByLabel('Type DELETE to confirm').fill('DELETE');
      await danger.getByRole('button', { name: 'Delete account' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
    });
  }, 150_000);
});
