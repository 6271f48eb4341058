import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, Locator, Page } from 'playwright-core';
import { ROOT } from './service-process';

/** Debian's Chromium (scripts/ensure-chromium.sh installs it); nothing downloads a browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(ROOT, 'test-results', 'screenshots');

/** Headless Chromium with the flags this closed network needs (no background connections, no sandbox as root). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: run scripts/ensure-chromium.sh (Debian package chromium)`,
    );
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
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
