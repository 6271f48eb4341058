import { Browser, BrowserContext, Page } from 'playwright-core';
import { expectCount, launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { registerVerifiedUser } from './support/factories';
import { bootTestApp, extractionEnv, TestApp } from './support/test-app';

/**
 * The web client's Files and Skills screens in a real Chromium against the real service (same origin, text
 * extraction on): upload with progress, the text status polled until ready, download, delete; a Skill
 * created with an input schema, run from the form built from it (streamed, with per-field 422 errors),
 * published again, exported, imported back; a starter template duplicated.
 */
describe('the web client: files and Skills in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    t = await bootTestApp({
      WEB_CLIENT: 'on',
      ECHO_DELAY_MS: '20',
      ...extractionEnv(),
    });
    base = await listen(t);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    // A fresh verified account per test (a Skill run needs a verified email), signed in through its cookie.
    const user = await registerVerifiedUser(t.http);
    const [name, value] = user.cookie.split('=');
    context = await browser.newContext({
      viewport: { width: 390, height: 844 },
    });
    await context.addCookies([{ name, value, url: base }]);
    page = await context.newPage();
  });
  afterEach(async () => {
    await context?.close();
  });

  /** The body of a same-origin link, fetched by the page with its cookie. */
  const fetchInPage = (href: string) =>
    page.evaluate(async (url) => {
      const res = await fetch(url);
      return {
        status: res.status,
        type: res.headers.get('content-type') ?? '',
        body: await res.text(),
      };
    }, href);

  it('uploads a text file with progress, sees its text become ready, downloads it and deletes it', async () => {
    const content = `Notes from the browser test ${Date.now()}.\nA second line.\n`;
    await step(page, 'files-open', async () => {
      await page.goto(`${base}/files`);
      await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      await page.getByText('No files yet.').waitFor();
    });

    await step(page, 'files-upload', async () => {
      await page.getByLabel('Upload a file').setInputFiles({
        name: 'notes.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from(content),
      });
      // The bar is there while the request is on its way (a small file may finish before it is seen).
      const progressSeen = page
        .getByRole('progressbar', { name: 'Upload progress' })
        .waitFor({ timeout: 5_000 })
        .then(() => true)
        .catch(() => false);
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      await page.getByText('Uploaded notes.txt.').waitFor();
      await progressSeen;
      await expectCount(page.getByRole('progressbar'), 0);
    });

    const item = page.getByRole('listitem').filter({ hasText: 'notes.txt' });
    await step(page, 'files-text-ready', async () => {
      await item.getByText(/Text: ready/).waitFor({ timeout: 30_000 });
      expect(await item.textContent()).toMatch(/text · \d+ B/);
    });

    await step(page, 'files-download', async () => {
      const href = await item
        .getByRole('link', { name: 'Download notes.txt' })
        .getAttribute('href');
      expect(href).toMatch(/^\/v1\/files\/[0-9a-f-]+\/content$/);
      const downloaded = await fetchInPage(href as string);
      expect(downloaded.status).toBe(200);
      expect(downloaded.body).toBe(content);
    });

    await step(page, 'files-refused-upload', async () => {
      // Content that is none of the accepted kinds: a readable refusal, never raw JSON.
      await page.getByLabel('Upload a file').setInputFiles({
        name: 'program.bin',
        mimeType: 'application/octet-stream',
        buffer: Buffer.from([
          0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0, 0xff, 0xfe,
        ]),
      });
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).not.toContain('{');
    });

    await step(page, 'files-delete', async () => {
      await item.getByRole('button', { name: 'Delete notes.txt' }).click();
      await item.getByRole('button', { name: 'Yes, delete' }).click();
      await page.getByText('No files yet.').waitFor();
      const listed = await fetchInPage('/v1/files');
      expect(JSON.parse(listed.body).data).toEqual([]);
    });
  }, 90_000);

  it('creates a Skill with an input schema, runs it from its form, publishes, exports, imports it back and duplicates a template', async () => {
    const name = `Greeter ${Date.now()}`;
    const schema = {
      type: 'object',
      properties: {
        topic: {
          type: 'string',
          title: 'Topic',
          description: 'What to talk about.',
          pattern: '^[a-z ]+$',
        },
        tone: { type: 'string', enum: ['warm', 'formal'] },
        loud: { type: 'boolean' },
      },
      required: ['topic', 'tone'],
      additionalProperties: false,
    };

    await step(page, 'skills-create', async () => {
      await page.goto(`${base}/skills`);
      await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
      await page.getByText('No Skills yet', { exact: false }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page
        .getByRole('textbox', { name: 'Instruction', exact: true })
        .fill('Greet the person about the topic.');
      await page.getByLabel('Input schema (JSON)').fill(JSON.stringify(schema));
      await page.getByRole('button', { name: 'Create Skill' }).click();
      await page.getByRole('heading', { name, level: 2 }).waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/skills\/[0-9a-f-]{36}$/);
    });
    const skillPath = new URL(page.url()).pathname;

    await step(page, 'skills-run-form', async () => {
      // Built from the schema: a required text field with its help, a required select, a checkbox.
      const topic = page.getByRole('textbox', { name: 'Topic (required)' });
      expect(await topic.getAttribute('required')).not.toBeNull();
      await page.getByText('What to talk about.', { exact: true }).waitFor();
      const tone = page.getByRole('combobox', { name: 'tone (required)' });
      await expectCount(page.locator('select[name="tone"]'), 1);
      expect(await tone.getAttribute('required')).not.toBeNull();
      expect(
        await page.getByRole('checkbox', { name: 'loud' }).isChecked(),
      ).toBe(false);
      await page.getByLabel('Model').selectOption('local/echo');
    });

    await step(page, 'skills-run-422', async () => {
      // The pattern is only checked by the service: its 422 is shown beside the field.
      await page
        .getByRole('textbox', { name: 'Topic (required)' })
        .fill('Gardens!');
      await page
        .getByRole('combobox', { name: 'tone (required)' })
        .selectOption('formal');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.locator('#run-field-topic-errors').waitFor();
      expect(
        await page.locator('#run-field-topic-errors').textContent(),
      ).toContain('pattern');
      expect(await page.getByRole('alert').first().textContent()).not.toContain(
        '{"',
      );
    });

    await step(page, 'skills-run-streams', async () => {
      await page
        .getByRole('textbox', { name: 'Topic (required)' })
        .fill('gardens');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      const answer = page.getByRole('region', { name: 'Answer' });
      await answer.locator('.usage').waitFor();
      const text = (await answer.locator('.text').textContent()) ?? '';
      expect(text.startsWith('Echo: ')).toBe(true);
      expect(JSON.parse(text.slice('Echo: '.length))).toEqual({
        topic: 'gardens',
        tone: 'formal',
        loud: false,
      });
      expect(await answer.locator('.usage').textContent()).toMatch(
        /\d+ tokens in · \d+ out · \d+ credits/,
      );
      await expectCount(page.locator('#run-field-topic-errors'), 0);
    });

    await step(page, 'skills-publish', async () => {
      await page
        .getByRole('textbox', { name: 'Instruction', exact: true })
        .fill('Greet the person warmly about the topic.');
      await page.getByRole('button', { name: 'Publish version' }).click();
      await page.getByText('Version 2 (current)').waitFor();
      // The run form is rebuilt from the new current version.
      await page.getByRole('textbox', { name: 'Topic (required)' }).waitFor();
    });

    let exported = '';
    await step(page, 'skills-export', async () => {
      const href = await page
        .getByRole('link', { name: 'Export' })
        .getAttribute('href');
      const res = await fetchInPage(href as string);
      expect(res.status).toBe(200);
      expect(res.type).toContain('application/json');
      const body = JSON.parse(res.body);
      expect(body).toMatchObject({
        name,
        version: 2,
        instruction: 'Greet the person warmly about the topic.',
        input_schema: schema,
      });
      exported = res.body;
    });

    await step(page, 'skills-import', async () => {
      await page.getByRole('link', { name: 'All Skills' }).click();
      await page.getByRole('link', { name }).waitFor();
      await page.getByLabel('Skill file (.json)').setInputFiles({
        name: 'greeter.json',
        mimeType: 'application/json',
        buffer: Buffer.from(exported),
      });
      await page.getByRole('button', { name: 'Import', exact: true }).click();
      await page.getByRole('heading', { name, level: 2 }).waitFor();
      await page.getByText('Version 2 (current)').waitFor();
      expect(new URL(page.url()).pathname).not.toBe(skillPath);
    });

    await step(page, 'skills-duplicate-template', async () => {
      await page.getByRole('link', { name: 'All Skills' }).click();
      // Both copies of the Skill are listed.
      await page.getByRole('heading', { name: 'Starter templates' }).waitFor();
      await expectCount(page.getByRole('link', { name }), 2);
      const duplicate = page
        .getByRole('button', { name: /^Duplicate / })
        .first();
      await duplicate.waitFor();
      const templateName = (
        (await duplicate.getAttribute('aria-label')) ?? ''
      ).replace(/^Duplicate /, '');
      await duplicate.click();
      await page
        .getByRole('heading', { name: templateName, level: 2 })
        .waitFor();
      await page.getByText('Version 1 (current)').waitFor();
      await page.getByRole('button', { name: 'Run', exact: true }).waitFor();
    });
  }, 90_000);
});
