import { randomUUID } from 'node:crypto';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { expectCount, launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { eventually } from './support/eventually';
import { registerVerifiedUser } from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/**
 * The page's scroll position, and whether the end of the page is in view (give or take what one render of
 * the stream adds before the page follows it). Evaluated in the page: this file is compiled without the
 * DOM's types.
 */
interface Scroll {
  y: number;
  atEnd: boolean;
}
const SCROLL =
  '({ y: window.scrollY, atEnd: window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 200 })';

/**
 * The chat as a chat product lays it out, in a real Chromium against the real service: the conversation list
 * beside the chat on a wide screen and folded away on a phone, a new conversation's title in it once its first
 * answer ends, the page following a streaming answer unless the person scrolled up, Send turning into Stop,
 * Enter and Shift+Enter, and the dark theme (the system's, or chosen and remembered).
 */
describe('the web client: chat layout, scrolling, keys and theme', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cookie: string;

  beforeAll(async () => {
    // local/echo streams word by word: slow enough here to scroll while an answer is still coming.
    t = await bootTestApp({ WEB_CLIENT: 'on', ECHO_DELAY_MS: '50' });
    base = await listen(t);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(async () => {
    await context?.close();
  });

  /** A fresh verified account, signed in in a new browser context. */
  async function signedIn(
    viewport: { width: number; height: number },
    colorScheme: 'light' | 'dark' = 'light',
  ): Promise<void> {
    const user = await registerVerifiedUser(t.http);
    cookie = user.cookie;
    const [name, value] = user.cookie.split('=');
    context = await browser.newContext({ viewport, colorScheme });
    await context.addCookies([{ name, value, url: base }]);
    page = await context.newPage();
  }

  /** A conversation made through the API (its title is its first message); answers its id. */
  async function conversation(text: string): Promise<string> {
    const res = await t.http
      .post('/v1/chat')
      .set('Cookie', cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: text }],
      })
      .expect(200);
    return String(res.headers['x-conversation-id']);
  }

  const sidebar = () => page.getByRole('navigation', { name: 'Conversations' });
  const listed = () => sidebar().getByRole('listitem').getByRole('link');
  const message = () => page.getByLabel('Message', { exact: true });
  const lastAnswer = () => page.locator('.turn-assistant .text').last();
  const scroll = () => page.evaluate<Scroll>(SCROLL);
  const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
  /** The scroll position once it stopped moving (a wheel scrolls smoothly). */
  const settled = async (): Promise<Scroll> => {
    let last = await scroll();
    for (;;) {
      await pause(200);
      const now = await scroll();
      if (now.y === last.y) return now;
      last = now;
    }
  };

  it('lists the conversations beside the chat on a wide screen: newest first, searched, the open one marked, New chat', async () => {
    await signedIn(WIDE);
    const alpha = await conversation('alpha apples');
    await conversation('bravo bananas');
    await page.goto(`${base}/`);

    await step(page, 'layout-wide-list', async () => {
      await listed().first().waitFor();
      expect(await listed().allTextContents()).toEqual([
        'bravo bananas',
        'alpha apples',
      ]);
      // Beside the chat, not above it, and nothing to unfold.
      const list = (await sidebar().boundingBox())!;
      const chat = (await page.locator('main').boundingBox())!;
      expect(list.x + list.width).toBeLessThanOrEqual(chat.x + 1);
      expect(list.y).toBeLessThan(chat.y + chat.height);
      expect(chat.y).toBeLessThan(list.y + list.height);
      await expectCount(
        page.getByRole('button', { name: 'Your conversations' }),
        0,
      );
      await expectCount(sidebar().locator('[aria-current="page"]'), 0);
    });

    await step(page, 'layout-wide-open', async () => {
      await listed().filter({ hasText: 'alpha apples' }).click();
      await page.waitForURL(`${base}/conversations/${alpha}`);
      await page
        .getByRole('heading', { level: 1, name: 'alpha apples' })
        .waitFor();
      expect(await lastAnswer().textContent()).toBe('Echo: alpha apples');
      const current = sidebar().locator('[aria-current="page"]');
      await expectCount(current, 1);
      expect(await current.textContent()).toBe('alpha apples');
    });

    await step(page, 'layout-wide-search', async () => {
      await sidebar().getByRole('searchbox').fill('bravo');
      await eventually(async () => (await listed().count()) === 1, 10_000);
      expect(await listed().allTextContents()).toEqual(['bravo bananas']);
      await sidebar().getByRole('searchbox').fill('');
      await eventually(async () => (await listed().count()) === 2, 10_000);
    });

    await step(page, 'layout-wide-new-chat', async () => {
      await sidebar().getByRole('button', { name: 'New chat' }).click();
      await page.waitForURL(`${base}/`);
      await expectCount(page.locator('.turn'), 0);
      await expectCount(sidebar().locator('[aria-current="page"]'), 0);
    });

    await step(page, 'layout-wide-new-title', async () => {
      // A long answer, so that the list can be seen while it streams.
      const words = Array.from({ length: 80 }, (_, index) => `c${index}`);
      await message().fill(`charlie cherries ${words.join(' ')}`);
      await message().press('Enter');
      await page.getByRole('button', { name: 'Stop' }).waitFor();
      // The conversation has its own address as soon as the stream names it...
      await page.waitForURL(/\/conversations\/[0-9a-f-]{36}$/);
      // ...and its title is listed once its first answer ends.
      expect(await listed().allTextContents()).toEqual([
        'bravo bananas',
        'alpha apples',
      ]);
      await page.getByRole('button', { name: 'Send' }).waitFor();
      await eventually(async () => (await listed().count()) === 3, 10_000);
      const titles = await listed().allTextContents();
      expect(titles[0]).toMatch(/^charlie cherries/);
      const current = sidebar().locator('[aria-current="page"]');
      await expectCount(current, 1);
      expect(await current.textContent()).toBe(titles[0]);
      // The page was not drawn again when its address changed: the answer is whole and the stream's own.
      expect(await lastAnswer().textContent()).toContain('c79');
    });
  }, 90_000);

  it('folds the list away on a phone behind a button that opens it', async () => {
    await signedIn(PHONE);
    const delta = await conversation('delta dates');
    await page.goto(`${base}/`);
    const toggle = page.getByRole('button', { name: 'Your conversations' });

    await step(page, 'layout-phone-folded', async () => {
      await toggle.waitFor();
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      await expectCount(listed(), 0);
      // The chat comes first on the screen, under the button.
      await message().waitFor();
    });

    await step(page, 'layout-phone-open', async () => {
      await toggle.click();
      expect(await toggle.getAttribute('aria-expanded')).toBe('true');
      await listed().filter({ hasText: 'delta dates' }).click();
      await page.waitForURL(`${base}/conversations/${delta}`);
      await page
        .getByRole('heading', { level: 1, name: 'delta dates' })
        .waitFor();
      // Chosen: folded again, the chat in view.
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      await expectCount(listed(), 0);
    });
  }, 60_000);

  it('follows a streaming answer unless the person scrolled up, then offers Jump to latest; Send becomes Stop and stops it', async () => {
    await signedIn(WIDE);
    await page.goto(`${base}/`);
    // Far taller than the screen: a paragraph a word, written word by word.
    const lines = Array.from({ length: 250 }, (_, index) => `line${index}`);
    const jump = page.getByRole('button', { name: 'Jump to latest' });

    await step(page, 'scroll-follows', async () => {
      await message().fill(lines.join('\n\n'));
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('button', { name: 'Stop' }).waitFor();
      await expectCount(page.getByRole('button', { name: 'Send' }), 0);
      // Past the screen's height, the page has moved with the answer and is at its end.
      await eventually(async () => (await scroll()).y > 400, 10_000);
      const first = await scroll();
      expect(first.atEnd).toBe(true);
      await eventually(async () => (await scroll()).y > first.y + 200, 10_000);
      expect((await scroll()).atEnd).toBe(true);
      await expectCount(jump, 0);
    });

    await step(page, 'scroll-stays-up', async () => {
      await page.mouse.move(900, 400);
      await page.mouse.wheel(0, -1500);
      await jump.waitFor();
      const up = await settled();
      expect(up.atEnd).toBe(false);
      // The answer goes on; the page stays where the person is reading.
      const text = (await lastAnswer().textContent()) ?? '';
      await eventually(
        async () =>
          ((await lastAnswer().textContent()) ?? '').length > text.length + 20,
        10_000,
      );
      const later = await scroll();
      expect(later.y).toBe(up.y);
      expect(later.atEnd).toBe(false);
    });

    await step(page, 'scroll-jump', async () => {
      await jump.click();
      await expectCount(jump, 0);
      expect((await scroll()).atEnd).toBe(true);
      const back = await scroll();
      await eventually(async () => (await scroll()).y > back.y, 10_000);
      expect((await scroll()).atEnd).toBe(true);
    });

    await step(page, 'scroll-stop', async () => {
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.getByText('Stopped.').waitFor();
      await page.getByRole('button', { name: 'Send' }).waitFor();
      expect(await lastAnswer().textContent()).not.toContain('line249');
    });
  }, 90_000);

  it('sends on Enter, starts a new line on Shift+Enter, and not on the Enter that ends an input method composition', async () => {
    await signedIn(PHONE);
    await page.goto(`${base}/`);

    await step(page, 'keys-shift-enter', async () => {
      await message().click();
      await page.keyboard.type('first line');
      await page.keyboard.press('Shift+Enter');
      await page.keyboard.type('second line');
      expect(await message().inputValue()).toBe('first line\nsecond line');
      await expectCount(page.locator('.turn'), 0);
    });

    await step(page, 'keys-composition', async () => {
      // An input method (Japanese, Chinese...) confirming its candidate with Enter: nothing is sent.
      for (const init of [
        '{ key: "Enter", isComposing: true, bubbles: true, cancelable: true }',
        '{ key: "Enter", keyCode: 229, bubbles: true, cancelable: true }',
      ])
        await page.evaluate(
          `document.getElementById('message').dispatchEvent(new KeyboardEvent('keydown', ${init}))`,
        );
      await pause(300);
      await expectCount(page.locator('.turn'), 0);
      expect(await message().inputValue()).toBe('first line\nsecond line');
    });

    await step(page, 'keys-enter', async () => {
      await message().press('Enter');
      await page.locator('.turn-assistant .usage').waitFor();
      expect(await message().inputValue()).toBe('');
      // The person's message keeps its line break; the echo answers it as written.
      expect(await page.locator('.turn-user .text').innerText()).toBe(
        'first line\nsecond line',
      );
      expect(await lastAnswer().textContent()).toContain('first line');
      expect(await lastAnswer().textContent()).toContain('second line');
    });
  }, 60_000);

  it('follows the system’s dark setting; the theme toggle overrides it and is remembered across a reload', async () => {
    await signedIn(PHONE, 'dark');
    const theme = page.getByLabel('Theme');
    const look = () =>
      page.evaluate<{ theme: string | null; background: string }>(
        '({ theme: document.documentElement.getAttribute("data-theme"), background: getComputedStyle(document.documentElement).backgroundColor })',
      );
    const DARK = 'rgb(3, 7, 18)';
    const LIGHT = 'rgb(250, 250, 250)';

    await step(page, 'theme-system-dark', async () => {
      await page.goto(`${base}/`);
      await theme.waitFor();
      expect(await theme.inputValue()).toBe('system');
      expect(await look()).toEqual({ theme: null, background: DARK });
    });

    await step(page, 'theme-light-remembered', async () => {
      await theme.selectOption('light');
      expect(await look()).toEqual({ theme: 'light', background: LIGHT });
      // Applied before the page draws anything: set once the document is parsed, before the app renders.
      await page.reload({ waitUntil: 'domcontentloaded' });
      expect(await look()).toEqual({ theme: 'light', background: LIGHT });
      expect(await theme.inputValue()).toBe('light');
    });

    await step(page, 'theme-dark-on-light-system', async () => {
      await page.emulateMedia({ colorScheme: 'light' });
      await theme.selectOption('dark');
      expect(await look()).toEqual({ theme: 'dark', background: DARK });
      await page.reload();
      await theme.waitFor();
      expect(await look()).toEqual({ theme: 'dark', background: DARK });
      // The answer and the person's message are drawn in the dark colours too.
      await message().fill('in the dark');
      await message().press('Enter');
      await page.locator('.turn-assistant .usage').waitFor();
      const turn = await page.evaluate<string>(
        'getComputedStyle(document.querySelector(".turn-assistant")).backgroundColor',
      );
      expect(turn).toBe('rgb(17, 24, 39)');
    });

    await step(page, 'theme-back-to-system', async () => {
      await theme.selectOption('system');
      expect(await look()).toEqual({ theme: null, background: LIGHT });
      expect(
        await page.evaluate<string | null>(
          'localStorage.getItem("chat.theme")',
        ),
      ).toBeNull();
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await look()).toEqual({ theme: null, background: DARK });
    });
  }, 60_000);

  it('applies a remembered theme before the app runs (a script of its own in the head)', async () => {
    await signedIn(WIDE, 'light');
    await page.goto(`${base}/`);
    await page.getByLabel('Theme').selectOption('dark');
    // Without the app's bundle, only the head's script can set the theme: what the first paint sees.
    await page.route(/\/assets\/index-[^/]*\.js$/, (route) => route.abort());
    await page.reload({ waitUntil: 'load' });
    expect(
      await page.evaluate<string | null>(
        'document.documentElement.getAttribute("data-theme")',
      ),
    ).toBe('dark');
  }, 60_000);

  it('shows an answer as written when the Markdown renderer cannot be loaded, and the app stays up', async () => {
    await signedIn(WIDE);
    await page.route(/\/assets\/Markdown-[^/]*\.js$/, (route) => route.abort());
    await page.goto(`${base}/`);
    // Send is enabled once the plan's models are there: Enter before that sends nothing.
    const sendReady = page.locator('button[type="submit"]:enabled', {
      hasText: 'Send',
    });
    await sendReady.waitFor();
    await message().fill('# Title\n\n- one\n- two');
    await message().press('Enter');
    const answer = page.locator('.turn-assistant .plain-answer').last();
    await step(page, 'markdown-unavailable', async () => {
      await page.locator('.turn-assistant .usage').waitFor();
      await answer.waitFor();
      expect(await answer.textContent()).toBe('Echo: # Title\n\n- one\n- two');
      // Still a working chat: the composer answers.
      await sendReady.waitFor();
      await message().fill('still here');
      await message().press('Enter');
      await expectCount(page.locator('.turn-assistant .usage'), 2);
    });
  }, 60_000);
});
