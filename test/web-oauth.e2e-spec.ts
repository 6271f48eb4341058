import { randomBytes, randomUUID } from 'node:crypto';
import { Browser, Page } from 'playwright-core';
import { launchChromium, step } from './support/browser';
import { registerUser, uniqueEmail } from './support/factories';
import { FakeOAuthProvider } from './support/fake-oauth';
import { freePort } from './support/service-process';
import { bootTestApp, TestApp } from './support/test-app';

/**
 * Google and GitHub sign-in from the web client in Chromium: the browser follows the service's redirect to
 * the (loopback) provider, where the person "consents" (the provider's page is played by a route that
 * answers its redirect back with a code), and lands signed in at the app, which is the service's own origin.
 */
describe('the web client: sign-in with Google and GitHub in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let google: FakeOAuthProvider;
  let github: FakeOAuthProvider;

  beforeAll(async () => {
    google = await new FakeOAuthProvider('google').start();
    github = await new FakeOAuthProvider('github').start();
    // The app and the API on one origin, known before the start: OAuth redirects are built from it.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await bootTestApp({
      WEB_CLIENT: 'on',
      APP_URL: base,
      API_URL: base,
      ...google.env('GOOGLE'),
      ...github.env('GITHUB'),
    });
    await t.app.listen(port, '127.0.0.1');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await Promise.all([google?.close(), github?.close()]);
  });

  /**
   * The provider's consent, as the person approving (or declining). Chromium does not hand redirected
   * requests to routes, so the service's own start request is routed instead: it runs for real (its state
   * cookie is kept), and its redirect to the provider is answered as the provider would, back to our callback.
   */
  async function atProvider(
    provider: 'google' | 'github',
    answer: (authorizeUrl: URL, callback: URL) => void,
  ): Promise<void> {
    await page.route(`${base}/v1/auth/${provider}`, async (route) => {
      const started = await route.fetch({ maxRedirects: 0 });
      const authorize = new URL(started.headers()['location']);
      const callback = new URL(
        authorize.searchParams.get('redirect_uri') ?? '',
      );
      callback.searchParams.set(
        'state',
        authorize.searchParams.get('state') ?? '',
      );
      answer(authorize, callback);
      await route.fulfill({
        status: 302,
        headers: { ...started.headers(), location: callback.toString() },
      });
    });
  }
  const consentAs = (
    provider: 'google' | 'github',
    fake: FakeOAuthProvider,
    account: { id: string; email: string; verified: boolean },
  ) =>
    atProvider(provider, (authorize, callback) =>
      callback.searchParams.set(
        'code',
        fake.approve(authorize.toString(), account),
      ),
    );

  it('signs up with Google, signs out, and signs in again with the same Google account', async () => {
    const account = {
      id: String(randomBytes(4).readUInt32BE()),
      email: uniqueEmail('google'),
      verified: true,
    };
    await consentAs('google', google, account);
    await step(page, 'oauth-google-first', async () => {
      await page.goto(`${base}/sign-in`);
      await page.getByRole('link', { name: 'Sign in with Google' }).click();
      await page.getByText(account.email).waitFor();
      expect(new URL(page.url()).origin).toBe(base);
    });
    await step(page, 'oauth-google-again', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByRole('link', { name: 'Sign in with Google' }).click();
      await page.getByText(account.email).waitFor();
    });
    await page.unrouteAll();
  }, 90_000);

  it('signs in with GitHub, and shows a readable message when the provider refuses', async () => {
    const account = {
      id: String(randomBytes(4).readUInt32BE()),
      email: uniqueEmail('github'),
      verified: true,
    };
    await step(page, 'oauth-github-signed-out', async () => {
      await page.goto(`${base}/sign-in`);
      // Still signed in from the test before, or not: wait for the app to know, then sign out if need be.
      const signOut = page.getByRole('button', { name: 'Sign out' });
      await signOut
        .or(page.getByRole('heading', { name: 'Sign in' }))
        .waitFor();
      if (await signOut.count()) await signOut.click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    });
    await consentAs('github', github, account);
    await step(page, 'oauth-github', async () => {
      await page.getByRole('link', { name: 'Sign in with GitHub' }).click();
      await page.getByText(account.email).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    });
    await page.unrouteAll();
    // The person declines at the provider: it redirects back with error=access_denied.
    await atProvider('github', (_authorize, callback) =>
      callback.searchParams.set('error', 'access_denied'),
    );
    await step(page, 'oauth-github-denied', async () => {
      await page.getByRole('link', { name: 'Sign in with GitHub' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).not.toMatch(/[{}]|oauth_denied/);
    });
  }, 90_000);

  it('brings a person who signs in with Google to continue a shared conversation back to it', async () => {
    const owner = await registerUser(t.http);
    const chat = await t.http
      .post('/v1/chat')
      .set('Cookie', owner.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'Plan a picnic' }],
      })
      .expect(200);
    const conversationId: string = chat.headers['x-conversation-id'];
    const { shareId } = (
      await t.http
        .post(`/v1/conversations/${conversationId}/share`)
        .set('Cookie', owner.cookie)
        .expect(201)
    ).body as { shareId: string };
    const account = {
      id: String(randomBytes(4).readUInt32BE()),
      email: uniqueEmail('google'),
      verified: true,
    };
    await step(page, 'oauth-shared-signed-out', async () => {
      await page.goto(`${base}/shared/${shareId}`);
      const signOut = page.getByRole('button', { name: 'Sign out' });
      const heading = page.getByRole('heading', {
        level: 1,
        name: 'Plan a picnic',
      });
      await signOut.or(heading).first().waitFor();
      if (await signOut.count()) {
        await signOut.click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        await page.goto(`${base}/shared/${shareId}`);
      }
      await heading.waitFor();
    });
    await consentAs('google', google, account);
    await step(page, 'oauth-shared-back', async () => {
      await page
        .getByRole('button', { name: 'Continue this conversation' })
        .click();
      await page.getByRole('link', { name: 'Sign in with Google' }).click();
      // Google answers at the root; the app goes on to the shared page the person came from.
      await page.waitForURL(`${base}/shared/${shareId}`);
      await page
        .getByRole('button', { name: 'Continue this conversation' })
        .click();
      await page.waitForURL(/\/conversations\/[0-9a-f-]{36}$/);
    });
    await page.unrouteAll();
  }, 90_000);
});
