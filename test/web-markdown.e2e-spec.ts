import { randomUUID } from 'node:crypto';
import { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { expectCount, launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { registerVerifiedUser, uniqueEmail } from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

/** A message written in Markdown: `local/echo` answers "Echo: " and the message as written. */
const CODE = [
  'const answer = 42; // the answer',
  'function greet(name) {',
  "  return 'Hello, ' + name;",
  '}',
].join('\n');
const MARKDOWN = [
  'Markdown check',
  '',
  '# Release plan',
  '',
  '- first **item**',
  '- second item',
  '',
  '1. one',
  '2. two',
  '',
  '| Name | Value |',
  '| ---- | ----: |',
  '| alpha | 1 |',
  '| beta | 2 |',
  '',
  'See [the docs](https://example.com/docs) or <mailto:help@example.com>; run `npm test` first.',
  '',
  '```js',
  CODE,
  '```',
  '',
  'That is all.',
].join('\n');

/** A long code block, so that the answer is seen while its fence is still open. */
const STEPS = Array.from(
  { length: 40 },
  (_, index) => `total = total + ${index + 1}  # step ${index + 1}`,
).join('\n');
const STREAMED = [
  'Streaming check',
  '',
  '## Steps',
  '',
  '```python',
  STEPS,
  '```',
  '',
  'Done streaming.',
].join('\n');

/**
 * Watches every answer on the page from before the app starts: whether "```" ever showed as text, whether a
 * code block was seen before its last line had arrived (the fence still open), and the first "Steps"
 * heading element (to find out later whether it was ever replaced).
 */
const WATCH_ANSWERS = `
  window.__md = { fence: false, openBlock: false, heading: null };
  new MutationObserver(() => {
    for (const answer of document.querySelectorAll('.turn-assistant .markdown')) {
      if ((answer.textContent || '').includes('\`\`\`')) window.__md.fence = true;
      const code = answer.querySelector('.code-block code');
      if (code && (answer.textContent || '').includes('Streaming check') && !(code.textContent || '').includes('step 40'))
        window.__md.openBlock = true;
      if (!window.__md.heading)
        for (const heading of answer.querySelectorAll('h3'))
          if (heading.textContent === 'Steps') window.__md.heading = heading;
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
`;

/** An answer carrying HTML and links that would run script if they were rendered as written. */
const HOSTILE = [
  'Hostile answer',
  '',
  '<img src=x onerror="window.__xss=1;alert(1)">',
  '',
  '<script>window.__xss=2;alert(2)</script>',
  '',
  'Links: [click](javascript:window.__xss=3) [encoded](&#106;avascript:window.__xss=4) ' +
    '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg==) [vb](vbscript:msgbox) ' +
    '[elsewhere](//evil.example/x) <javascript:window.__xss=6> [fine](https://example.com/fine)',
  '',
  '![pixel](https://tracker.example/p.png)',
  '',
  '<a href="javascript:window.__xss=7">raw link</a> <iframe src="javascript:alert(8)"></iframe>',
].join('\n');
const REMOVED_LINKS = ['click', 'encoded', 'data', 'vb', 'elsewhere'];

/** What the tests read of a page's element (this file is compiled without the DOM's types). */
interface DomElement {
  getAttribute(name: string): string | null;
  innerText: string;
}

/** The highlighter's own chunk (web/src/markdown/highlighter.ts, loaded by a dynamic import()). */
const isHighlighterChunk = (url: string) =>
  /\/assets\/highlighter-[^/]*\.js$/.test(new URL(url).pathname);

/**
 * Answers rendered as Markdown in the web client, in Chromium against the real service: headings, lists,
 * tables, links (new tab, rel="noopener noreferrer"), inline code and highlighted code blocks with Copy
 * code; the highlighter fetched only once a code block appears; HTML and script links in an answer inert
 * (with the page's CSP bypassed, so that what keeps them inert is the rendering itself); people's own
 * messages keep their line breaks. On the shared page (the same renderer, no sign-in) and on the chat.
 */
describe('the web client: Markdown answers in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    t = await bootTestApp({ WEB_CLIENT: 'on', ECHO_DELAY_MS: '10' });
    base = await listen(t);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
    await t?.close();
  });

  /** A page in a fresh context that records what it requests, any dialog, and lets the test read the clipboard. */
  const newPage = async () => {
    const context = await browser.newContext({
      viewport: { width: 1024, height: 900 },
      bypassCSP: true,
    });
    contexts.push(context);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: base,
    });
    const page = await context.newPage();
    const requests: string[] = [];
    const dialogs: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    return { page, requests, dialogs };
  };

  /** A conversation of one message answered by local/echo, shared by link: its share id. */
  const sharedConversation = async (message: string) => {
    const user = await registerVerifiedUser(t.http);
    const chat = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: message }],
      })
      .expect(200);
    const conversationId = String(chat.headers['x-conversation-id']);
    const share = await t.http
      .post(`/v1/conversations/${conversationId}/share`)
      .set('Cookie', user.cookie)
      .expect(201);
    return share.body.shareId as string;
  };

  const xss = (page: Page) =>
    page.evaluate<unknown>('window.__xss === undefined ? null : window.__xss');

  /** The rendered Markdown of `message`'s answer, checked piece by piece. */
  const expectRendered = async (answer: Locator) => {
    await answer
      .getByRole('heading', { name: 'Release plan', level: 2 })
      .waitFor();
    expect(await answer.locator('ul > li').allTextContents()).toEqual([
      'first item',
      'second item',
    ]);
    expect(await answer.locator('ul > li strong').textContent()).toBe('item');
    expect(await answer.locator('ol > li').allTextContents()).toEqual([
      'one',
      'two',
    ]);
    const table = answer.getByRole('table');
    expect(await table.getByRole('columnheader').allTextContents()).toEqual([
      'Name',
      'Value',
    ]);
    expect(await table.getByRole('cell').allTextContents()).toEqual([
      'alpha',
      '1',
      'beta',
      '2',
    ]);
    const docs = answer.getByRole('link', { name: 'the docs' });
    expect(await docs.getAttribute('href')).toBe('https://example.com/docs');
    expect(await docs.getAttribute('target')).toBe('_blank');
    expect(await docs.getAttribute('rel')).toBe('noopener noreferrer');
    expect(
      await answer
        .getByRole('link', { name: 'help@example.com' })
        .getAttribute('href'),
    ).toBe('mailto:help@example.com');
    expect(await answer.locator('p > code').textContent()).toBe('npm test');
    // The fenced block: its language, its code as written, highlighted tokens once the chunk arrived.
    const block = answer.locator('.code-block');
    await expectCount(block, 1);
    expect(await block.locator('.code-language').textContent()).toBe('js');
    expect(await block.locator('pre code').textContent()).toBe(CODE);
    await block.locator('code .hljs-keyword').first().waitFor();
    expect(await block.locator('code .hljs-keyword').allTextContents()).toEqual(
      expect.arrayContaining(['const', 'function', 'return']),
    );
    expect(await block.locator('code .hljs-comment').textContent()).toBe(
      '// the answer',
    );
    expect(await answer.textContent()).not.toContain('```');
  };

  /** Copy code puts the block's code on the clipboard and says so. */
  const expectCopies = async (page: Page, answer: Locator) => {
    const block = answer.locator('.code-block');
    await block.getByRole('button', { name: 'Copy code' }).click();
    await block.getByRole('status').getByText('Copied').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(
      CODE,
    );
  };

  /** Nothing in the hostile answer ran, loaded or became a script link. */
  const expectInert = async (
    page: Page,
    answer: Locator,
    seen: { requests: string[]; dialogs: string[] },
  ) => {
    // The HTML reads as the text it is, and made no element.
    const text = (await answer.textContent()) ?? '';
    expect(text).toContain('<img src=x onerror="window.__xss=1;alert(1)">');
    expect(text).toContain('<script>window.__xss=2;alert(2)</script>');
    expect(text).toContain('raw link</a>');
    for (const tag of ['img', 'script', 'iframe'])
      await expectCount(answer.locator(tag), 0);
    // Only http(s), mailto and in-answer links are left; the others are plain words.
    const hrefs = await answer
      .locator('a')
      .evaluateAll((links: DomElement[]) =>
        links.map((link) => link.getAttribute('href')),
      );
    for (const href of hrefs) expect(href).toMatch(/^(https?:|mailto:|#)/);
    for (const name of REMOVED_LINKS) {
      await expectCount(answer.getByRole('link', { name, exact: true }), 0);
      await expectCount(answer.locator('.link-removed', { hasText: name }), 1);
    }
    await expectCount(
      answer.getByRole('link', { name: /javascript|raw link/ }),
      0,
    );
    const fine = answer.getByRole('link', { name: 'fine' });
    expect(await fine.getAttribute('href')).toBe('https://example.com/fine');
    expect(await fine.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await fine.getAttribute('target')).toBe('_blank');
    // The image is a link to it, never fetched.
    expect(
      await answer
        .getByRole('link', { name: 'Image: pixel' })
        .getAttribute('href'),
    ).toBe('https://tracker.example/p.png');
    // Clicking the words of a removed script link does nothing.
    const url = page.url();
    await answer.locator('.link-removed', { hasText: 'click' }).click();
    await answer
      .locator('.link-removed', { hasText: 'javascript:window.__xss=6' })
      .click();
    await page.waitForTimeout(300);
    expect(page.url()).toBe(url);
    expect(await xss(page)).toBeNull();
    expect(seen.dialogs).toEqual([]);
    expect(
      seen.requests.filter(
        (request) =>
          request.includes('tracker.example') ||
          request.includes('evil.example') ||
          new URL(request).pathname === '/x',
      ),
    ).toEqual([]);
  };

  it('renders a shared answer’s Markdown: heading, lists, table, links, inline code, a highlighted code block to copy', async () => {
    const shareId = await sharedConversation(MARKDOWN);
    const { page, requests } = await newPage();
    await step(page, 'markdown-shared-rendered', async () => {
      await page.goto(`${base}/shared/${shareId}`);
      const answer = page.locator('.turn-assistant .markdown');
      await expectRendered(answer);
      // The highlighter came as its own chunk, once, for the code block.
      expect(requests.filter(isHighlighterChunk)).toHaveLength(1);
    });
    await step(page, 'markdown-shared-copy', async () => {
      await expectCopies(page, page.locator('.turn-assistant .markdown'));
    });
    await step(page, 'markdown-shared-user-lines', async () => {
      // The person's message as typed: lines and blank lines kept, no Markdown made of it.
      const mine = page.locator('.turn-user .plain-text');
      expect(await mine.evaluate((el: DomElement) => el.innerText)).toBe(
        MARKDOWN,
      );
      await expectCount(page.locator('.turn-user h2, .turn-user table'), 0);
    });
  }, 60_000);

  it('renders HTML, script links and images in a shared answer inert, and fetches no highlighter without code', async () => {
    const shareId = await sharedConversation(HOSTILE);
    const seen = await newPage();
    const { page, requests } = seen;
    await step(page, 'markdown-shared-hostile', async () => {
      await page.goto(`${base}/shared/${shareId}`);
      const answer = page.locator('.turn-assistant .markdown');
      await answer.getByRole('link', { name: 'fine' }).waitFor();
      await expectInert(page, answer, seen);
      await page.waitForLoadState('networkidle');
      expect(requests.filter(isHighlighterChunk)).toEqual([]);
    });
  }, 60_000);
  it('renders answers as Markdown while they stream in the chat: no raw fences, no replaced blocks, the highlighter fetched for the first code block only, script inert', async () => {
    const seen = await newPage();
    const { page, requests } = seen;
    await page.addInitScript(WATCH_ANSWERS);
    const send = async (text: string, last: string) => {
      await page.getByLabel('Message', { exact: true }).fill(text);
      await page.getByRole('button', { name: 'Send' }).click();
      await page
        .locator('.turn-assistant .markdown', { hasText: last })
        .waitFor();
      await page.getByRole('button', { name: 'Send' }).waitFor();
      return page.locator('.turn-assistant .markdown').last();
    };

    await step(page, 'markdown-chat-sign-up', async () => {
      await page.goto(`${base}/sign-up`);
      await page.getByLabel('Email').fill(uniqueEmail('markdown'));
      await page.getByLabel('Password').fill('a long enough markdown password');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByLabel('Message', { exact: true }).waitFor();
      await page.getByLabel('Model').selectOption('local/echo');
    });

    await step(page, 'markdown-chat-without-code', async () => {
      const plain = MARKDOWN.slice(0, MARKDOWN.indexOf('```')).trimEnd();
      const answer = await send(plain, 'npm test');
      await answer
        .getByRole('heading', { name: 'Release plan', level: 2 })
        .waitFor();
      await answer.getByRole('table').waitFor();
      // The person's message keeps its lines.
      expect(
        await page
          .locator('.turn-user .text')
          .last()
          .evaluate((el: DomElement) => el.innerText),
      ).toBe(plain);
      await page.waitForLoadState('networkidle');
      expect(requests.filter(isHighlighterChunk)).toEqual([]);
    });

    await step(page, 'markdown-chat-streams-code', async () => {
      const answer = await send(STREAMED, 'Done streaming.');
      await answer.locator('.code-block code .hljs-comment').first().waitFor();
      expect(
        await answer.locator('.code-block .code-language').textContent(),
      ).toBe('python');
      expect(await answer.locator('.code-block pre code').textContent()).toBe(
        STEPS,
      );
      const watched = await page.evaluate<{
        fence: boolean;
        openBlock: boolean;
        headingKept: boolean;
      }>(
        '({ fence: window.__md.fence, openBlock: window.__md.openBlock, headingKept: window.__md.heading !== null && window.__md.heading.isConnected })',
      );
      // Seen mid-stream as a code block in progress, never as raw backticks; the heading above it was
      // rendered once and kept (not replaced on every delta).
      expect(watched).toEqual({
        fence: false,
        openBlock: true,
        headingKept: true,
      });
      expect(requests.filter(isHighlighterChunk)).toHaveLength(1);
    });

    await step(page, 'markdown-chat-code-and-copy', async () => {
      const answer = await send(MARKDOWN, 'That is all.');
      await expectRendered(answer);
      await expectCopies(page, answer);
      // Already loaded: not fetched again.
      expect(requests.filter(isHighlighterChunk)).toHaveLength(1);
    });

    await step(page, 'markdown-chat-hostile', async () => {
      const answer = await send(HOSTILE, '</iframe>');
      await expectInert(page, answer, seen);
    });
  }, 120_000);
});
