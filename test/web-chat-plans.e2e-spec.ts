import { Browser, Page } from 'playwright-core';
import { billingEnv } from './support/billing';
import { expectCount, launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { eventually } from './support/eventually';
import { registerUser, PASSWORD } from './support/factories';
import { FakeModelServer } from './support/fake-model-servers';
import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import { sql } from './support/sql';
import { bootTestApp, extractionEnv, TestApp } from './support/test-app';

/**
 * The chat, conversations and plans screens in a real Chromium against the real service: conversations
 * listed, searched, renamed, archived, continued, regenerated, edited and deleted; files attached; the
 * provider's failures and the used-up quota in plain words; checkout redirecting to the provider.
 */
describe('the web client: chat, conversations and plans', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let model: FakeModelServer;
  let stripe: FakeStripe;
  let paddle: FakePaddle;

  beforeAll(async () => {
    model = await new FakeModelServer().start();
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    t = await bootTestApp({
      WEB_CLIENT: 'on',
      ECHO_DELAY_MS: '5',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.baseUrl,
      ...billingEnv(stripe, paddle),
      ...extractionEnv(),
    });
    base = await listen(t);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await model?.close();
    await stripe?.close();
    await paddle?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  });
  afterEach(async () => {
    await page.close();
  });

  /** A fresh account (through the API), signed in through the sign-in screen. */
  async function signedIn() {
    const user = await registerUser(t.http);
    await page.goto(`${base}/`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(user.email).waitFor();
    return user;
  }

  async function ask(text: string, model = 'local/echo') {
    await page.getByLabel('Model').selectOption(model);
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
  }

  /** Sends a message to local/echo and waits for the whole answer (its usage, then Send again). */
  async function chatEcho(text: string) {
    const usages = await page.locator('.turn-assistant .usage').count();
    await ask(text);
    await page
      .locator('.turn-assistant .text', { hasText: `Echo: ${text}` })
      .waitFor();
    await eventually(
      async () =>
        (await page.locator('.turn-assistant .usage').count()) > usages,
      10_000,
    );
    await page.getByRole('button', { name: 'Send' }).waitFor();
  }

  const item = (title: string) =>
    page
      .getByRole('listitem')
      .filter({ has: page.getByRole('link', { name: title, exact: true }) });
  const assistantTexts = () =>
    page.locator('.turn-assistant .text').allTextContents();
  const userTexts = () => page.locator('.turn-user .text').allTextContents();

  it('lists, searches, renames, archives, continues, regenerates, edits and deletes conversations', async () => {
    await signedIn();

    await step(page, 'conversations-two-chats', async () => {
      await page.getByText('50 credits left today').waitFor();
      await chatEcho('alpha apples');
      // The badge reads the quota again after each answer (local/echo costs 1 credit a request).
      await page.getByText('49 credits left today').waitFor();
      await page.getByRole('button', { name: 'New conversation' }).click();
      await expectCount(page.locator('.turn'), 0);
      await chatEcho('bravo bananas');
    });

    await step(page, 'conversations-list-and-search', async () => {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Conversations' })
        .click();
      await page.getByRole('heading', { name: 'Conversations' }).waitFor();
      await item('alpha apples').waitFor();
      await item('bravo bananas').waitFor();
      await page.getByLabel('Search conversations').fill('bravo');
      await eventually(
        async () =>
          (await page.getByRole('link', { name: 'alpha apples' }).count()) ===
          0,
        10_000,
      );
      await item('bravo bananas').waitFor();
      await page.getByLabel('Search conversations').fill('');
      await item('alpha apples').waitFor();
    });

    await step(page, 'conversations-rename', async () => {
      await item('alpha apples')
        .getByRole('button', { name: 'Rename' })
        .click();
      await page.getByLabel('New title').fill('Fruit notes');
      await page.getByRole('button', { name: 'Save' }).click();
      await item('Fruit notes').waitFor();
      await expectCount(page.getByRole('link', { name: 'alpha apples' }), 0);
    });

    await step(page, 'conversations-archive', async () => {
      await item('Fruit notes')
        .getByRole('button', { name: 'Archive', exact: true })
        .click();
      await eventually(
        async () =>
          (await page.getByRole('link', { name: 'Fruit notes' }).count()) === 0,
        10_000,
      );
      await page.getByRole('status').filter({ hasText: 'archived' }).waitFor();
      // Gone from the list until "Show archived".
      await page.reload();
      await item('bravo bananas').waitFor();
      await expectCount(page.getByRole('link', { name: 'Fruit notes' }), 0);
      await page.getByLabel('Show archived').check();
      await item('Fruit notes').waitFor();
      await expectCount(page.getByRole('link', { name: 'bravo bananas' }), 0);
      await item('Fruit notes')
        .getByRole('button', { name: 'Unarchive' })
        .click();
      await eventually(
        async () =>
          (await page.getByRole('link', { name: 'Fruit notes' }).count()) === 0,
        10_000,
      );
      await page.getByLabel('Show archived').uncheck();
      await item('Fruit notes').waitFor();
    });

    await step(page, 'conversations-open-and-continue', async () => {
      await item('bravo bananas')
        .getByRole('link', { name: 'bravo bananas' })
        .click();
      await page.waitForURL(/\/conversations\/[0-9a-f-]{36}$/);
      await page.getByRole('heading', { name: 'bravo bananas' }).waitFor();
      await page
        .locator('.turn-assistant .text', { hasText: 'Echo: bravo bananas' })
        .waitFor();
      await chatEcho('charlie cherries');
      expect(await userTexts()).toEqual(['bravo bananas', 'charlie cherries']);
      expect(await assistantTexts()).toEqual([
        'Echo: bravo bananas',
        'Echo: charlie cherries',
      ]);
      // The answer continued the same conversation: reloading shows all four messages.
      await page.reload();
      await page
        .locator('.turn-assistant .text', { hasText: 'Echo: charlie cherries' })
        .waitFor();
      await expectCount(page.locator('.turn'), 4);
    });

    await step(page, 'conversations-regenerate', async () => {
      // Only the last answer can be answered again.
      await expectCount(page.getByRole('button', { name: 'Regenerate' }), 1);
      await page.getByRole('button', { name: 'Regenerate' }).click();
      await page.getByText('Version 2 of 2').waitFor();
      expect(await assistantTexts()).toEqual([
        'Echo: bravo bananas',
        'Echo: charlie cherries',
      ]);
      await page.getByRole('button', { name: 'Previous version' }).click();
      await page.getByText('Version 1 of 2').waitFor();
    });

    await step(page, 'conversations-edit', async () => {
      await page
        .locator('.turn-user')
        .first()
        .getByRole('button', { name: 'Edit' })
        .click();
      await page.getByLabel('Edited message').fill('delta dates');
      await page.getByRole('button', { name: 'Save and send' }).click();
      await page
        .locator('.turn-assistant .text', { hasText: 'Echo: delta dates' })
        .waitFor();
      await page.getByRole('button', { name: 'Send' }).waitFor();
      // A new branch from the edited message: what followed it is no longer on the current branch.
      await eventually(
        async () => (await page.locator('.turn').count()) === 2,
        10_000,
      );
      expect(await userTexts()).toEqual(['delta dates']);
      await page.locator('.turn-user').getByText('Version 2 of 2').waitFor();
    });

    await step(page, 'conversations-delete', async () => {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Conversations' })
        .click();
      await item('bravo bananas')
        .getByRole('button', { name: 'Delete', exact: true })
        .click();
      // A confirm step first: keeping it changes nothing.
      await item('bravo bananas')
        .getByRole('button', { name: 'Keep it' })
        .click();
      await item('bravo bananas')
        .getByRole('button', { name: 'Delete', exact: true })
        .click();
      await item('bravo bananas')
        .getByRole('button', { name: 'Delete for good' })
        .click();
      await eventually(
        async () =>
          (await page.getByRole('link', { name: 'bravo bananas' }).count()) ===
          0,
        10_000,
      );
      await page.reload();
      await item('Fruit notes').waitFor();
      await expectCount(page.getByRole('link', { name: 'bravo bananas' }), 0);
    });
  }, 90_000);

  it('attaches files whose text is ready to a message', async () => {
    const user = await signedIn();
    const upload = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', Buffer.from('The launch code is tangerine.'), 'notes.txt')
      .expect(201);
    const fileId = upload.body.id as string;
    await eventually(
      async () =>
        (await t.http.get(`/v1/files/${fileId}`).set('Cookie', user.cookie))
          .body.text.status === 'ready',
      20_000,
    );

    await step(page, 'attach-files', async () => {
      await page.reload();
      await page.locator('summary', { hasText: 'Attach files' }).click();
      const files = page.getByRole('group', { name: 'Attach files' });
      await files.getByLabel('notes.txt').check();
      const sent = page.waitForRequest(
        (request) =>
          request.url().endsWith('/v1/chat') && request.method() === 'POST',
      );
      await chatEcho('what is the code');
      expect((await sent).postDataJSON()).toMatchObject({
        fileIds: [fileId],
        messages: [{ role: 'user', content: 'what is the code' }],
      });
      await page
        .locator('.turn-user .attached-files', { hasText: 'notes.txt' })
        .waitFor();
      // The selection is for one message.
      expect(await files.getByLabel('notes.txt').isChecked()).toBe(false);
    });
  }, 90_000);

  it('shows a provider failure as a readable notice, before and during the answer', async () => {
    await signedIn();
    await step(page, 'provider-http-error', async () => {
      model.mode = {
        kind: 'http-error',
        status: 500,
        message: 'upstream exploded',
      };
      await ask('will this fail', 'openai/gpt-4o-mini');
      const alert = page.getByRole('alert');
      await alert.waitFor();
      const text = (await alert.textContent()) ?? '';
      expect(text).toContain('The model provider failed before answering');
      expect(text).not.toMatch(/[{}]|idempotencyKey/);
      // Nothing was lost: the message is back in the box to send again.
      expect(
        await page.getByLabel('Message', { exact: true }).inputValue(),
      ).toBe('will this fail');
      await expectCount(page.locator('.turn'), 0);
    });

    await step(page, 'provider-mid-stream-error', async () => {
      model.mode = {
        kind: 'error-after',
        words: ['partial', ' answer'],
        message: 'overloaded',
      };
      await page.getByRole('button', { name: 'Send' }).click();
      await page
        .locator('.turn-assistant .text', { hasText: 'partial answer' })
        .waitFor();
      const alert = page.locator('.turn-assistant').getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain(
        'The model provider failed during the answer',
      );
      expect(await alert.textContent()).not.toContain('{');
      await page.getByRole('button', { name: 'Send' }).waitFor();
    });

    await step(page, 'rate-limited', async () => {
      // A refusal as the service's rate limiter answers it (429 problem with Retry-After).
      await page.route(`${base}/v1/chat`, (route) =>
        route.fulfill({
          status: 429,
          headers: {
            'Content-Type': 'application/problem+json',
            'Retry-After': '7',
          },
          body: JSON.stringify({
            type: 'urn:problem-type:rate-limited',
            title: 'Too many requests',
            status: 429,
            code: 'rate_limited',
            detail: 'Too many attempts: try again in 7 seconds.',
          }),
        }),
      );
      await ask('too fast', 'local/echo');
      const alert = page.getByRole('alert').filter({ hasText: 'Try again' });
      await alert.waitFor();
      expect(await alert.textContent()).toBe(
        'Too many requests right now. Try again in 7 s.',
      );
      await page.unroute(`${base}/v1/chat`);
    });
    model.mode = { kind: 'ok', words: ['Hello', ' world'] };
  }, 90_000);

  it('says when the daily credits are used up and when they come back', async () => {
    const user = await signedIn();
    await sql(
      `INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, (now() AT TIME ZONE 'utc')::date, 50, 0)
       ON CONFLICT ("userId", day) DO UPDATE SET used = 50`,
      [user.id],
    );
    await step(page, 'quota-used-up', async () => {
      await page.reload();
      await page.getByText('0 credits left today').waitFor();
      await ask('one more please');
      const alert = page.getByRole('alert');
      await alert.waitFor();
      const text = (await alert.textContent()) ?? '';
      expect(text).toContain("You have used up today's credits.");
      expect(text).toMatch(/They reset at .+ \(in \d+ (h \d+ )?min\)/);
      expect(text).not.toMatch(/[{}]|GET \/v1/);
      await alert.getByRole('link', { name: 'See the plans' }).click();
      await page.getByRole('heading', { name: 'Plans' }).waitFor();
    });
  }, 90_000);

  it('lists the plans with the current one marked and checks out Pro through Stripe', async () => {
    await signedIn();
    await step(page, 'plans-list', async () => {
      await page.getByText('50 credits left today').waitFor();
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Plans' })
        .click();
      await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
      const free = page
        .getByRole('listitem')
        .filter({ has: page.getByRole('heading', { name: 'Free', level: 2 }) });
      const pro = page
        .getByRole('listitem')
        .filter({ has: page.getByRole('heading', { name: 'Pro', level: 2 }) });
      await free.getByText('Current plan').waitFor();
      expect(await free.getAttribute('aria-current')).toBe('true');
      await expectCount(pro.getByText('Current plan'), 0);
      await pro.getByText('$20.00 / month').waitFor();
      await pro.getByText('2,000 credits a day').waitFor();
      await pro.getByText(/Models: .*Claude Haiku 4\.5/).waitFor();
      await page.getByText('You have no paid subscription.').waitFor();
      // Free and Enterprise cannot be bought here.
      await expectCount(free.getByRole('button'), 0);
    });

    await step(page, 'plans-checkout-stripe', async () => {
      const pages: string[] = [];
      await page.route('https://checkout.stripe.test/**', async (route) => {
        pages.push(route.request().url());
        await route.fulfill({
          status: 200,
          contentType: 'text/html',
          body: '<!doctype html><title>Fake Stripe checkout</title><h1>Pay</h1>',
        });
      });
      const pro = page
        .getByRole('listitem')
        .filter({ has: page.getByRole('heading', { name: 'Pro', level: 2 }) });
      await pro
        .getByRole('group', { name: 'Subscribe to Pro' })
        .getByRole('button', { name: 'Subscribe with Stripe' })
        .click();
      await page.waitForURL(/^https:\/\/checkout\.stripe\.test\/c\/pay\//);
      expect(pages).toHaveLength(1);
      expect(
        stripe
          .creations()
          .some((request) => request.body.includes('client_reference_id')),
      ).toBe(true);
    });

    await step(page, 'plans-checkout-canceled', async () => {
      // Where the provider sends the person back when they give up.
      await page.goto(
        `${base}/billing/canceled?checkoutId=00000000-0000-0000-0000-000000000000`,
      );
      await page
        .getByRole('status')
        .filter({
          hasText: 'The checkout was canceled and nothing was charged.',
        })
        .waitFor();
      await page.getByRole('link', { name: 'Back to the plans' }).click();
      await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    });
  }, 90_000);
});
