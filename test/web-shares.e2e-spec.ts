import { Browser, BrowserContext, Page } from 'playwright-core';
import { expectCount, launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { uniqueEmail } from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

/** The links the service makes: APP_URL/shared/{shareId} (the page itself is opened on the test's origin). */
const APP_URL = 'http://chat.example.test';
const SHARE_URL = /^http:\/\/chat\.example\.test\/shared\/([A-Za-z0-9_-]{24})$/;

/**
 * Sharing a conversation by link and rating answers in the web client, in Chromium against the real
 * service: the owner shares a conversation, a signed-out visitor reads it (the API answer says noindex),
 * signs up on the way and continues it in a copy of their own; the owner rates the answers (a thumbs down
 * with a comment that stays after a reload, ratings toggled off), updates the link (the old one is gone) and
 * stops sharing (the page says the link was removed).
 */
describe('the web client: shared conversations and answer ratings in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    t = await bootTestApp({
      WEB_CLIENT: 'on',
      ECHO_DELAY_MS: '10',
      APP_URL,
    });
    base = await listen(t);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
    await t?.close();
  });

  const newPage = async (width: number): Promise<Page> => {
    const context = await browser.newContext({
      viewport: { width, height: 900 },
    });
    contexts.push(context);
    return context.newPage();
  };
  const signUp = async (page: Page, email: string) => {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a long enough sharing password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByText(email).waitFor();
  };
  const send = async (page: Page, text: string) => {
    await page.getByLabel('Model').selectOption('local/echo');
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .locator('.turn-assistant .text', { hasText: `Echo: ${text}` })
      .waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
  };
  const shareLink = (page: Page) =>
    page.getByRole('textbox', { name: 'Share link', exact: true });
  /** Opens /shared/{id} and answers the page's GET /v1/shared/{id} response. */
  const openShared = async (page: Page, shareId: string) => {
    const [response] = await Promise.all([
      page.waitForResponse((res) =>
        res.url().endsWith(`/v1/shared/${shareId}`),
      ),
      page.goto(`${base}/shared/${shareId}`),
    ]);
    return response;
  };

  it('shares a conversation, shows it signed out, continues it in another account, rates answers and stops sharing', async () => {
    const ownerEmail = uniqueEmail('sharer');
    const visitorEmail = uniqueEmail('share-visitor');
    const owner = await newPage(1280);
    const visitor = await newPage(390);
    let conversationId = '';
    let shareId = '';
    let title = '';

    await step(owner, 'shares-owner-chat', async () => {
      await owner.goto(`${base}/sign-up`);
      await signUp(owner, ownerEmail);
      await send(owner, 'what is a share link');
      await send(owner, 'and who can read it');
      const conversations = await owner
        .context()
        .request.get(`${base}/v1/conversations`);
      const list = (await conversations.json()) as {
        data: { id: string; title: string }[];
      };
      conversationId = list.data[0].id;
      title = list.data[0].title;
      // Not shared yet: the control offers to share.
      await owner.getByRole('button', { name: 'Share', exact: true }).waitFor();
    });

    await step(owner, 'shares-owner-share', async () => {
      await owner.getByRole('button', { name: 'Share', exact: true }).click();
      await owner.getByText('Link created').waitFor();
      const url = await shareLink(owner).inputValue();
      expect(url).toMatch(SHARE_URL);
      shareId = SHARE_URL.exec(url)![1];
      expect(await owner.locator('.share-control').textContent()).toContain(
        'Update link shares the conversation as it is now under a new link',
      );
      await owner
        .context()
        .grantPermissions(['clipboard-read', 'clipboard-write'], {
          origin: base,
        });
      await owner.getByRole('button', { name: 'Copy link' }).click();
      await owner.getByText('Link copied.').waitFor();
      expect(
        await owner.evaluate<string>('navigator.clipboard.readText()'),
      ).toBe(url);
      // The conversation says it is shared when opened again.
      await owner.goto(`${base}/conversations/${conversationId}`);
      expect(await shareLink(owner).inputValue()).toBe(url);
    });

    await step(visitor, 'shares-signed-out-read', async () => {
      const response = await openShared(visitor, shareId);
      expect(response.status()).toBe(200);
      expect(response.headers()['x-robots-tag']).toContain('noindex');
      expect(response.headers()['cache-control']).toContain('private');
      const body = await response.text();
      for (const secret of [ownerEmail, conversationId])
        expect(body).not.toContain(secret);
      await visitor.getByRole('heading', { level: 1, name: title }).waitFor();
      // Read signed out: never sent to the sign-in screen.
      expect(
        await visitor.getByRole('heading', { name: 'Sign in' }).count(),
      ).toBe(0);
      const turns = visitor.getByRole('list', { name: 'Messages' });
      await expectCount(turns.locator('.turn'), 4);
      expect(await turns.locator('.turn-user .text').allTextContents()).toEqual(
        ['what is a share link', 'and who can read it'],
      );
      expect(
        await turns.locator('.turn-assistant .text').allTextContents(),
      ).toEqual(['Echo: what is a share link', 'Echo: and who can read it']);
      await expectCount(
        turns.locator('.turn-assistant', { hasText: 'Answered by local/echo' }),
        2,
      );
      expect(
        await visitor.locator('meta[name="robots"]').getAttribute('content'),
      ).toBe('noindex');
    });

    await step(visitor, 'shares-visitor-signs-up-and-continues', async () => {
      await visitor
        .getByRole('button', { name: 'Continue this conversation' })
        .click();
      await visitor.getByRole('heading', { name: 'Sign in' }).waitFor();
      await visitor.getByText('continue the shared conversation').waitFor();
      await visitor.getByRole('link', { name: 'Sign up' }).click();
      await visitor
        .getByRole('heading', { name: 'Create an account' })
        .waitFor();
      await signUp(visitor, visitorEmail);
      // Back on the shared page, signed in now: continuing copies it.
      await visitor.getByRole('heading', { level: 1, name: title }).waitFor();
      expect(new URL(visitor.url()).pathname).toBe(`/shared/${shareId}`);
      await visitor
        .getByRole('button', { name: 'Continue this conversation' })
        .click();
      await visitor.waitForURL(/\/conversations\/[0-9a-f-]{36}$/);
      const forkId = /\/conversations\/([0-9a-f-]{36})$/.exec(
        visitor.url(),
      )![1];
      expect(forkId).not.toBe(conversationId);
      await visitor.getByRole('heading', { level: 1, name: title }).waitFor();
      await expectCount(visitor.locator('.turns .turn'), 4);
      await send(visitor, 'going on in my own copy');
      await expectCount(visitor.locator('.turns .turn'), 6);
      // The copy is the visitor's own, and unshared.
      await visitor
        .getByRole('button', { name: 'Share', exact: true })
        .waitFor();
    });

    const firstAnswer = owner.locator('.turn-assistant').first();
    const secondAnswer = owner.locator('.turn-assistant').nth(1);
    const thumb = (
      answer: typeof firstAnswer,
      name: 'Thumbs up' | 'Thumbs down',
    ) =>
      answer
        .getByRole('group', { name: 'Rate this answer' })
        .getByRole('button', { name });
    const storedFeedback = async () => {
      const res = await owner
        .context()
        .request.get(`${base}/v1/conversations/${conversationId}`);
      const conversation = (await res.json()) as {
        messages: {
          role: string;
          feedback: { rating: string; comment: string | null } | null;
        }[];
      };
      return conversation.messages
        .filter((message) => message.role === 'assistant')
        .map(
          (message) =>
            message.feedback && {
              rating: message.feedback.rating,
              comment: message.feedback.comment,
            },
        );
    };

    await step(owner, 'shares-thumbs-down-with-comment', async () => {
      expect(
        await thumb(firstAnswer, 'Thumbs down').getAttribute('aria-pressed'),
      ).toBe('false');
      await thumb(firstAnswer, 'Thumbs down').click();
      await firstAnswer.getByText('rated as a poor answer').waitFor();
      expect(
        await thumb(firstAnswer, 'Thumbs down').getAttribute('aria-pressed'),
      ).toBe('true');
      expect(
        await thumb(firstAnswer, 'Thumbs up').getAttribute('aria-pressed'),
      ).toBe('false');
      // A thumbs down opens the comment box.
      await firstAnswer
        .getByLabel('Comment (optional)')
        .fill('It only repeated my question.');
      await firstAnswer.getByRole('button', { name: 'Save comment' }).click();
      await firstAnswer
        .getByText('Your comment: It only repeated my question.')
        .waitFor();
      await thumb(secondAnswer, 'Thumbs up').click();
      await secondAnswer.getByText('rated as a good answer').waitFor();

      await owner.reload();
      await firstAnswer
        .getByText('Your comment: It only repeated my question.')
        .waitFor();
      expect(
        await thumb(firstAnswer, 'Thumbs down').getAttribute('aria-pressed'),
      ).toBe('true');
      expect(
        await thumb(secondAnswer, 'Thumbs up').getAttribute('aria-pressed'),
      ).toBe('true');
      expect(await storedFeedback()).toEqual([
        { rating: 'down', comment: 'It only repeated my question.' },
        { rating: 'up', comment: null },
      ]);
    });

    await step(owner, 'shares-thumbs-off', async () => {
      // The chosen thumb again removes the rating.
      await thumb(firstAnswer, 'Thumbs down').click();
      await firstAnswer.getByText('Rating removed.').waitFor();
      expect(
        await thumb(firstAnswer, 'Thumbs down').getAttribute('aria-pressed'),
      ).toBe('false');
      expect(await firstAnswer.getByText('Your comment:').count()).toBe(0);
      await thumb(secondAnswer, 'Thumbs up').click();
      await secondAnswer.getByText('Rating removed.').waitFor();
      await owner.reload();
      await thumb(firstAnswer, 'Thumbs down').waitFor();
      for (const answer of [firstAnswer, secondAnswer])
        for (const name of ['Thumbs up', 'Thumbs down'] as const)
          expect(await thumb(answer, name).getAttribute('aria-pressed')).toBe(
            'false',
          );
      expect(await storedFeedback()).toEqual([null, null]);
    });

    const reader = await newPage(390);
    let oldShareId = '';
    await step(owner, 'shares-update-link', async () => {
      await owner.getByRole('button', { name: 'Update link' }).click();
      await owner.getByText('Link updated: this is a new link').waitFor();
      const url = await shareLink(owner).inputValue();
      expect(url).toMatch(SHARE_URL);
      oldShareId = shareId;
      shareId = SHARE_URL.exec(url)![1];
      expect(shareId).not.toBe(oldShareId);
    });

    await step(reader, 'shares-old-link-gone', async () => {
      const old = await openShared(reader, oldShareId);
      expect(old.status()).toBe(404);
      expect(old.headers()['x-robots-tag']).toContain('noindex');
      await reader
        .getByText('This link was removed or never existed')
        .waitFor();
      expect((await openShared(reader, shareId)).status()).toBe(200);
      await reader.getByRole('heading', { level: 1, name: title }).waitFor();
    });

    await step(owner, 'shares-stop-sharing', async () => {
      await owner.getByRole('button', { name: 'Stop sharing' }).click();
      await owner.getByText('Sharing stopped').waitFor();
      await owner.getByRole('button', { name: 'Share', exact: true }).waitFor();
      expect(await shareLink(owner).count()).toBe(0);
      await owner.reload();
      await owner.getByRole('button', { name: 'Share', exact: true }).waitFor();
    });

    await step(reader, 'shares-removed-notice', async () => {
      const gone = await openShared(reader, shareId);
      expect(gone.status()).toBe(404);
      expect(gone.headers()['x-robots-tag']).toContain('noindex');
      await reader
        .getByText('This link was removed or never existed')
        .waitFor();
      expect(
        await reader
          .getByRole('button', { name: 'Continue this conversation' })
          .count(),
      ).toBe(0);
    });
  }, 120_000);
});
