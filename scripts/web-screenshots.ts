/**
 * Screenshots of the reference web client for the README (docs/screenshots/*.png), taken in Debian's
 * Chromium from a running service: `npm start` (or any instance with WEB_CLIENT=on), then
 * `npm run web:screenshots -- [http://localhost:3000]`. Signs up a new account on it.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, Page } from 'playwright-core';

const base = process.argv[2] ?? 'http://localhost:3000';
const MARKDOWN = [
  'Here is the plan.',
  '',
  '## A plan for the week',
  '',
  '1. **Monday**: read the brief',
  '2. *Tuesday*: write the [outline](https://example.com)',
  '',
  '| Day | Hours |',
  '|---|---|',
  '| Monday | 2 |',
  '',
  '```ts',
  'const hours = [2, 3, 1].reduce((a, b) => a + b, 0);',
  '```',
].join('\n');
const out = resolve(__dirname, '..', 'docs', 'screenshots');

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(out, `${name}.png`) });
  console.log(`docs/screenshots/${name}.png`);
}

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage({
      viewport: { width: 1100, height: 720 },
    });
    await page.goto(`${base}/sign-up`);
    await page
      .getByLabel('Email')
      .fill(`screenshots-${randomUUID().slice(0, 8)}@example.com`);
    await page.getByLabel('Password').fill('screenshots password 123');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();

    await page.getByLabel('Model').selectOption('local/echo');
    // The echo answers the message as written: Markdown shows how answers render.
    await page.getByLabel('Message', { exact: true }).fill(MARKDOWN);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.turn-assistant .usage').last().waitFor();
    await page.locator('.turn-assistant pre code span').first().waitFor();
    await shoot(page, 'chat');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(300);
    await shoot(page, 'chat-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    for (const [path, name] of [
      ['/plans', 'plans'],
      ['/account', 'account'],
    ] as const) {
      await page.goto(`${base}${path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.waitForTimeout(500);
      await shoot(page, name);
    }
    const phone = await browser.newPage({
      viewport: { width: 390, height: 844 },
    });
    await phone.goto(`${base}/sign-in`);
    await phone.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shoot(phone, 'sign-in-phone');
  } finally {
    await browser.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
