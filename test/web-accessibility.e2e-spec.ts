import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { registerVerifiedUser, uniqueEmail } from './support/factories';
import { bootTestApp, TestApp } from './support/test-app';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's WCAG 2.1 A/AA rules on the page as it is now: the serious and critical findings. (Its script is
 * injected into the page, which the service's CSP forbids: these contexts bypass CSP.)
 */
async function violations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  // Evaluated in the page (a string: this file is compiled without the DOM's types).
  const { found, passed } = await page.evaluate<{
    found: AxeViolation[];
    passed: number;
  }>(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((result) => ({ found: result.violations, passed: result.passes.length }))",
  );
  // The rules did run on this page (labels, names, contrast...): an empty list means something.
  expect(passed).toBeGreaterThan(5);
  return found
    .filter(
      (violation) =>
        violation.impact === 'serious' || violation.impact === 'critical',
    )
    .map(
      (violation) =>
        `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
    );
}

/**
 * Every screen of the web client checked by axe-core (WCAG 2.1 A and AA) in Chromium, on a phone-sized
 * viewport: labels, names, contrast, landmarks, ARIA use. Signed out and signed in.
 */
describe('the web client’s accessibility (axe-core)', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    t = await bootTestApp({ WEB_CLIENT: 'on' });
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

  it('has no serious or critical findings on the signed-out screens', async () => {
    context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      bypassCSP: true,
    });
    page = await context.newPage();
    for (const [path, heading] of [
      ['/sign-in', 'Sign in'],
      ['/sign-up', 'Create an account'],
      ['/forgot-password', 'Forgot your password?'],
    ] as const) {
      await step(page, `a11y${path.replace(/\//g, '-')}`, async () => {
        await page.goto(`${base}${path}`);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        expect(
          await page.getByRole('heading', { level: 1 }).first().textContent(),
        ).toBe(heading);
        expect({ path, findings: await violations(page) }).toEqual({
          path,
          findings: [],
        });
      });
    }
  }, 90_000);

  it('has no serious or critical findings on the signed-in screens', async () => {
    const user = await registerVerifiedUser(t.http);
    const [name, value] = user.cookie.split('=');
    context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      bypassCSP: true,
    });
    await context.addCookies([{ name, value, url: base }]);
    page = await context.newPage();
    for (const path of [
      '/',
      '/conversations',
      '/files',
      '/skills',
      '/plans',
      '/account',
    ]) {
      await step(
        page,
        `a11y${path === '/' ? '-chat' : path.replace(/\//g, '-')}`,
        async () => {
          await page.goto(`${base}${path}`);
          await page.getByRole('button', { name: 'Sign out' }).waitFor();
          await page.waitForLoadState('networkidle');
          expect({ path, findings: await violations(page) }).toEqual({
            path,
            findings: [],
          });
        },
      );
    }
  }, 90_000);

  it('has no serious or critical findings on a shared conversation (signed out and in) and on the sharing and rating controls', async () => {
    const user = await registerVerifiedUser(t.http);
    const chat = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'a conversation to share' }],
      })
      .expect(200);
    const conversationId = String(chat.headers['x-conversation-id']);
    const conversation = await t.http
      .get(`/v1/conversations/${conversationId}`)
      .set('Cookie', user.cookie)
      .expect(200);
    const answer = (
      conversation.body.messages as { id: string; role: string }[]
    ).find((message) => message.role === 'assistant')!;
    await t.http
      .put(`/v1/conversations/${conversationId}/messages/${answer.id}/feedback`)
      .set('Cookie', user.cookie)
      .send({ rating: 'down', comment: 'Shown on the screen under test.' })
      .expect(200);
    const shareId = (
      await t.http
        .post(`/v1/conversations/${conversationId}/share`)
        .set('Cookie', user.cookie)
        .expect(201)
    ).body.shareId as string;

    const [name, value] = user.cookie.split('=');
    for (const signedIn of [false, true]) {
      context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        bypassCSP: true,
      });
      if (signedIn) await context.addCookies([{ name, value, url: base }]);
      page = await context.newPage();
      const paths = signedIn
        ? [`/conversations/${conversationId}`, `/shared/${shareId}`]
        : [`/shared/${shareId}`, '/shared/AAAAAAAAAAAAAAAAAAAAAAAA'];
      for (const path of paths) {
        await step(page, `a11y${path.replace(/\//g, '-')}`, async () => {
          await page.goto(`${base}${path}`);
          await page
            .getByText(
              path.startsWith('/conversations')
                ? 'Your comment:'
                : path.endsWith(shareId)
                  ? 'Continue this conversation'
                  : 'This link was removed or never existed',
            )
            .first()
            .waitFor();
          await page.waitForLoadState('networkidle');
          expect({ path, signedIn, findings: await violations(page) }).toEqual({
            path,
            signedIn,
            findings: [],
          });
        });
      }
      await context.close();
    }
  }, 90_000);

  it('has no serious or critical findings on an answer rendered as Markdown (light and dark)', async () => {
    const user = await registerVerifiedUser(t.http);
    const content = [
      'Markdown for axe',
      '',
      '# A heading',
      '',
      '> A quote, with a [link](https://example.com/quoted).',
      '',
      '- [x] done',
      '- [ ] to do',
      '',
      '| Name | Value |',
      '| ---- | ----: |',
      '| alpha | 1 |',
      '',
      'Inline `code`, ~~struck~~ and a footnote[^1].',
      '',
      '```ts',
      '// a comment',
      'export const answer: number = 42;',
      "const text = 'a string';",
      '```',
      '',
      '[^1]: The footnote.',
    ].join('\n');
    const chat = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content }],
      })
      .expect(200);
    const shareId = (
      await t.http
        .post(
          `/v1/conversations/${String(chat.headers['x-conversation-id'])}/share`,
        )
        .set('Cookie', user.cookie)
        .expect(201)
    ).body.shareId as string;
    for (const colorScheme of ['light', 'dark'] as const) {
      context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        bypassCSP: true,
        colorScheme,
      });
      page = await context.newPage();
      await step(page, `a11y-markdown-${colorScheme}`, async () => {
        await page.goto(`${base}/shared/${shareId}`);
        await page.locator('.markdown .hljs-keyword').first().waitFor();
        await page.waitForLoadState('networkidle');
        expect({ colorScheme, findings: await violations(page) }).toEqual({
          colorScheme,
          findings: [],
        });
      });
      await context.close();
    }
  }, 90_000);

  it('can be used by keyboard alone: sign up, then send a chat', async () => {
    context = await browser.newContext({
      viewport: { width: 390, height: 844 },
    });
    page = await context.newPage();
    const email = uniqueEmail('keyboard');
    await step(page, 'keyboard-sign-up', async () => {
      await page.goto(`${base}/sign-up`);
      await page.getByRole('heading', { name: 'Create an account' }).waitFor();
      // From the top of the page: Tab to each field in order, Enter submits.
      await tabUntil(page, 'Email');
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type('typed by keyboard only 123');
      await page.keyboard.press('Enter');
      await page.getByText(email).waitFor();
    });
    await step(page, 'keyboard-chat', async () => {
      await tabUntil(page, 'Model');
      await page.keyboard.press('Home');
      await tabUntil(page, 'Message');
      await page.keyboard.type('hello by keyboard');
      await page.keyboard.press('Tab');
      expect(await focusedName(page)).toBe('Send');
      await page.keyboard.press('Enter');
      await page.locator('.turn-assistant .usage').last().waitFor();
      expect(
        await page.locator('.turn-assistant .text').last().textContent(),
      ).toContain('hello by keyboard');
    });
  }, 90_000);

  it('has no serious or critical findings in the dark theme (the system’s or chosen), and with the conversation list beside the chat', async () => {
    const user = await registerVerifiedUser(t.http);
    const chat = await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [
          {
            role: 'user',
            content:
              'A conversation in the dark\n\nwith `code`, a [link](https://example.com) and a list:\n\n- one\n- two',
          },
        ],
      })
      .expect(200);
    const conversationId = String(chat.headers['x-conversation-id']);
    const answer = (
      (
        await t.http
          .get(`/v1/conversations/${conversationId}`)
          .set('Cookie', user.cookie)
          .expect(200)
      ).body.messages as { id: string; role: string }[]
    ).find((message) => message.role === 'assistant')!;
    await t.http
      .put(`/v1/conversations/${conversationId}/messages/${answer.id}/feedback`)
      .set('Cookie', user.cookie)
      .send({ rating: 'down', comment: 'Shown in the dark.' })
      .expect(200);
    const conversation = `/conversations/${conversationId}`;
    const phone = { width: 390, height: 844 };
    const wide = { width: 1280, height: 800 };
    const [name, value] = user.cookie.split('=');
    const background = () =>
      page.evaluate<string>(
        'getComputedStyle(document.documentElement).backgroundColor',
      );
    const check = async (label: string) =>
      expect({ label, findings: await violations(page) }).toEqual({
        label,
        findings: [],
      });

    // Signed out, the system dark.
    context = await browser.newContext({
      viewport: phone,
      bypassCSP: true,
      colorScheme: 'dark',
    });
    page = await context.newPage();
    for (const path of ['/sign-in', '/sign-up']) {
      await step(page, `a11y-dark${path.replace(/\//g, '-')}`, async () => {
        await page.goto(`${base}${path}`);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        expect(await background()).toBe('rgb(3, 7, 18)');
        await check(`dark ${path}`);
      });
    }
    await context.close();

    // Signed in: every screen on a phone in the system's dark; the chat with its list on a wide screen in
    // both; and the dark theme chosen with the toggle over a light system.
    for (const run of [
      {
        scheme: 'dark' as const,
        chosen: false,
        viewport: phone,
        paths: [
          '/',
          conversation,
          '/conversations',
          '/files',
          '/skills',
          '/organization',
          '/plans',
          '/account',
        ],
      },
      {
        scheme: 'dark' as const,
        chosen: false,
        viewport: wide,
        paths: ['/', conversation],
      },
      {
        scheme: 'light' as const,
        chosen: false,
        viewport: wide,
        paths: [conversation],
      },
      {
        scheme: 'light' as const,
        chosen: true,
        viewport: wide,
        paths: [conversation],
      },
    ]) {
      context = await browser.newContext({
        viewport: run.viewport,
        bypassCSP: true,
        colorScheme: run.scheme,
      });
      await context.addCookies([{ name, value, url: base }]);
      if (run.chosen)
        await context.addInitScript(
          "localStorage.setItem('chat.theme', 'dark')",
        );
      const dark = run.scheme === 'dark' || run.chosen;
      page = await context.newPage();
      for (const path of run.paths) {
        const label = `${dark ? 'dark' : 'light'}${run.chosen ? ' (chosen)' : ''} ${run.viewport.width}px ${path}`;
        await step(
          page,
          `a11y-theme-${label.replace(/[^a-z0-9]+/gi, '-')}`,
          async () => {
            await page.goto(`${base}${path}`);
            await page.getByRole('button', { name: 'Sign out' }).waitFor();
            if (path === conversation)
              await page.getByText('Your comment:').waitFor();
            if (run.viewport === wide)
              await page
                .getByRole('navigation', { name: 'Conversations' })
                .getByRole('link', { name: 'A conversation in the dark' })
                .waitFor();
            await page.waitForLoadState('networkidle');
            expect(await background()).toBe(
              dark ? 'rgb(3, 7, 18)' : 'rgb(250, 250, 250)',
            );
            await check(label);
            if (path === '/' && run.viewport === phone) {
              // The list unfolded on a phone.
              await page
                .getByRole('button', { name: 'Your conversations' })
                .click();
              await page
                .getByRole('link', { name: 'A conversation in the dark' })
                .waitFor();
              await check(`${label}, the list unfolded`);
            }
          },
        );
      }
      await context.close();
    }
  }, 180_000);
});

/** The accessible name of the focused element (its label's text, or its own text for a button). */
function focusedName(page: Page): Promise<string> {
  return page.evaluate<string>(
    "(() => { const el = document.activeElement; if (!el) return ''; const label = el.labels && el.labels[0]; return ((label ? label.textContent : el.textContent) || el.getAttribute('aria-label') || '').trim(); })()",
  );
}

/** Presses Tab until the focused control's name starts with `name` (at most 40 times). */
async function tabUntil(page: Page, name: string): Promise<void> {
  for (let presses = 0; presses < 40; presses++) {
    await page.keyboard.press('Tab');
    if ((await focusedName(page)).startsWith(name)) return;
  }
  throw new Error(`no control named ${name} was reached with Tab`);
}
