import { Browser, BrowserContext, Page } from 'playwright-core';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { echoTool, FakeMcpServer } from './support/fake-mcp-server';
import { registerVerifiedUser, uniqueEmail } from './support/factories';
import { createMigratedDatabase } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

/**
 * Tools in the web client, in a real Chromium against the real service and a real MCP server on loopback:
 * the tool picker, a call shown folded with its arguments and result while the answer streams, a call that
 * needs approval approved from its buttons, and the calls shown again when the conversation is reopened.
 * On a database of its own: MCP servers are global.
 */
describe('the web client: tools in Chromium', () => {
  const adminEmail = uniqueEmail('web-tools-admin');
  let database: ScratchDatabase;
  let t: TestApp;
  let base: string;
  let fake: FakeMcpServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_web_tools');
    fake = await new FakeMcpServer([
      echoTool(),
      {
        name: 'wipe',
        description: 'Destroys things',
        annotations: { destructiveHint: true },
        run: () => 'wiped',
      },
    ]).start();
    t = await bootTestApp({
      DATABASE_URL: database.url,
      WEB_CLIENT: 'on',
      ECHO_DELAY_MS: '10',
      ADMIN_EMAILS: adminEmail,
      MCP_ALLOWED_HOSTS: '127.0.0.1',
    });
    base = await listen(t);
    const admin = await registerVerifiedUser(t.http, {
      email: adminEmail,
      databaseUrl: database.url,
    });
    await t.http
      .post('/v1/admin/mcp-servers')
      .set('Cookie', admin.cookie)
      .send({ name: 'box', url: fake.url })
      .expect(201);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
    await database?.drop();
  });
  beforeEach(async () => {
    const user = await registerVerifiedUser(t.http, {
      databaseUrl: database.url,
    });
    const [name, value] = user.cookie.split('=');
    context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
    });
    await context.addCookies([{ name, value, url: base }]);
    page = await context.newPage();
  });
  afterEach(async () => {
    await context?.close();
  });

  const chooseTool = async (id: string) => {
    await page.getByText('Tools', { exact: true }).click();
    await page
      .getByRole('checkbox', { name: new RegExp(id.replaceAll('.', '\\.')) })
      .check();
  };
  const send = async (text: string) => {
    await page.getByLabel('Message').fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
  };

  it('offers the tools, shows a call folded with its arguments and result, and again when reopened', async () => {
    await step(page, 'tools-pick', async () => {
      await page.goto(`${base}/`);
      await chooseTool('mcp.box.echo');
      await page.getByText('Tools (1 on)').waitFor();
    });
    await step(page, 'tools-call', async () => {
      await send('/tool mcp.box.echo {"text":"from the browser"}');
      await page
        .getByText('Echo: Tool result: echo: from the browser')
        .waitFor();
      const summary = page.getByText(/Tool mcp\.box\.echo: done/);
      await summary.click();
      await page.getByText('"text": "from the browser"').waitFor();
      await page
        .locator('.tool-calls pre', { hasText: /^echo: from the browser$/ })
        .waitFor();
    });
    await step(page, 'tools-reopen', async () => {
      // The newest conversation, as the page's own session lists it.
      const id = await page.evaluate(async () => {
        const res = await fetch('/v1/conversations');
        const body = (await res.json()) as { data: { id: string }[] };
        return body.data[0].id;
      });
      await page.goto(`${base}/conversations/${id}`);
      await page.getByText(/Tool mcp\.box\.echo: done/).waitFor();
    });
  });

  it('asks before a destructive call: Approve lets it run, and the answer goes on', async () => {
    const before = fake.executions('wipe');
    await page.goto(`${base}/`);
    await chooseTool('mcp.box.wipe');
    await step(page, 'tools-approval', async () => {
      await send('/tool mcp.box.wipe {"all":true}');
      await page.getByText(/waiting for your approval/).waitFor();
      expect(fake.executions('wipe')).toBe(before);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByText('Echo: Tool result: wiped').waitFor();
      await page.getByText(/Tool mcp\.box\.wipe: done/).waitFor();
    });
    expect(fake.executions('wipe')).toBe(before + 1);
  });

  it('binds tools to a Skill on its screen; its runs call them', async () => {
    const before = fake.executions('echo');
    await page.goto(`${base}/skills`);
    await step(page, 'tools-skill-create', async () => {
      await page.getByLabel('Name', { exact: true }).fill('Tool user');
      await page
        .getByRole('textbox', { name: 'Instruction', exact: true })
        .fill('Use the tools.');
      await page.getByRole('button', { name: 'Create Skill' }).click();
      await page
        .getByRole('heading', { name: 'Tool user', level: 2 })
        .waitFor();
    });
    await step(page, 'tools-skill-bind', async () => {
      await page.getByRole('checkbox', { name: /mcp\.box\.echo/ }).check();
      await page.getByRole('button', { name: 'Save tools' }).click();
      await page.getByText('Tools saved.').waitFor();
    });
    await step(page, 'tools-skill-run', async () => {
      await page
        .getByRole('textbox', { name: 'Input (required)' })
        .fill('/tool mcp.box.echo {"text":"skilled"}');
      await page.getByLabel('Model').selectOption('local/echo');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.getByText('Echo: Tool result: echo: skilled').waitFor();
    });
    expect(fake.executions('echo')).toBe(before + 1);
  });
});
