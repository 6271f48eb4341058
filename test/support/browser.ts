import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, Locator, Page } from 'playwright-core';
import { ROOT } from './service-process';

export const SCREENSHOT_DIR = join(ROOT, 'test-results', 'screenshots');

/** Headless Chromium with the flags this closed network needs (no background connections, no sandbox as root). */
export async function launchChromium(): Promise<Browser> {
  // Found or installed by global-setup (run-tools.ts), only for runs that include the browser tests.
  const executablePath = process.env.TEST_CHROMIUM_PATH;
  if (!executablePath)
    throw new Error(
      'TEST_CHROMIUM_PATH is not set: run the tests through jest (global-setup finds the browser)',
    );
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Runs one step of a journey; on failure the page is saved as test-results/screenshots/<name>.png. */
export async function step<T>(
  page: Page,
  name: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page
      .screenshot({
        path: join(SCREENSHOT_DIR, `${name.replace(/[^a-z0-9-]+/gi, '-')}.png`),
        fullPage: true,
      })
      .catch(() => undefined);
    throw error;
  }
}

/**
 * Expects the locator to match `count` elements, waiting up to 10 s for the page to get there (a screen
 * re-renders after its requests answer): fails with the last count seen.
 */
export async function expectCount(
  locator: Locator,
  count: number,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = await locator.count();
  while (seen !== count && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 100));
    seen = await locator.count();
  }
  expect(seen).toBe(count);
}
