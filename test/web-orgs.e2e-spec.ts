import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { expectCount, launchChromium, step } from './support/browser';
import { listen } from './support/chat-client';
import { eventually } from './support/eventually';
import {
  PASSWORD,
  registerVerifiedUser,
  uniqueEmail,
} from './support/factories';
import { startFakeSmtp, verificationTokenOf } from './support/fake-smtp';
import { invitationTokenOf } from './support/orgs';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

const VERIFY_SUBJECT = 'Verify your email address';
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The credits of the last answer on the page, from its usage line ("… · 3 credits"). */
async function lastAnswerCredits(page: Page): Promise<number> {
  const usage = page.locator('.turn-assistant .usage').last();
  await usage.waitFor();
  const match = /(\d+) credits?/.exec((await usage.textContent()) ?? '');
  if (!match) throw new Error('no credits in the usage line');
  return Number(match[1]);
}

const creditsText = (credits: number) =>
  `${credits} ${credits === 1 ? 'credit' : 'credits'}`;

/** A number as the page formats it ("1,234 credits" → 1234). */
const numberIn = (text: string | null) =>
  Number((text ?? '').replace(/[^\d]/g, ''));

/** axe-core's serious and critical WCAG 2.1 A/AA findings on the page as it is now. */
async function axeFindings(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const found = await page.evaluate<
    { id: string; impact: string | null; nodes: { target: string[] }[] }[]
  >(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((result) => result.violations)",
  );
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) => `${v.id} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
    );
}

/**
 * Organizations in the web client, in a real Chromium against the real service with mail caught by a fake
 * SMTP server: A creates an organization, it gets a paid plan (by SQL: the seat checkout is tested
 * elsewhere), A invites B from the Organization screen, B opens the mailed link signed out, signs up, verifies
 * the address and accepts; both chat with the organization chosen and its pool pays for both runs (in the
 * pool view, the usage report and the database); A shares a Skill that B runs but cannot change.
 */
describe('the web client: organizations in Chromium', () => {
  let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
  let t: TestApp;
  let base: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    smtp = await startFakeSmtp();
    t = await bootTestApp({
      WEB_CLIENT: 'on',
      SMTP_URL: smtp.url,
      ECHO_DELAY_MS: '10',
    });
    base = await listen(t);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  /** A browser of its own (its cookies and storage), axe allowed in (CSP bypassed). */
  async function newPage(viewport: { width: number; height: number }) {
    const context = await browser.newContext({ viewport, bypassCSP: true });
    contexts.push(context);
    return { context, page: await context.newPage() };
  }

  const chat = async (page: Page, text: string) => {
    await page.getByLabel('Model').selectOption('local/echo');
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
    return lastAnswerCredits(page);
  };

  it('creates an organization, invites a second person who accepts by the mailed link, and both spend its pool', async () => {
    const orgName = `Acme ${Date.now()}`;
    const a = await registerVerifiedUser(t.http, {
      email: uniqueEmail('org-owner'),
    });
    const bEmail = uniqueEmail('org-member');
    const { context: contextA, page: pageA } = await newPage({
      width: 1280,
      height: 900,
    });
    const [cookieName, cookieValue] = a.cookie.split('=');
    await contextA.addCookies([
      { name: cookieName, value: cookieValue, url: base },
    ]);
    const sectionA = (name: string) =>
      pageA.getByRole('region', { name, exact: true });
    const switcher = (page: Page) =>
      page.getByLabel('Organization', { exact: true });

    let orgId = '';
    await step(pageA, 'orgs-create', async () => {
      await pageA.goto(`${base}/organization`);
      await pageA
        .getByRole('heading', { name: 'Organization', level: 1 })
        .waitFor();
      await pageA.getByText('You are working in your personal space').waitFor();
      await pageA.getByLabel('New organization name').fill(orgName);
      await pageA.getByRole('button', { name: 'Create organization' }).click();
      await pageA
        .getByText(
          `${orgName} was created and is now your current organization.`,
        )
        .waitFor();
      const [row] = await sql<{ id: string }>(
        `SELECT o.id FROM "Organization" o JOIN "OrgMember" m ON m."organizationId" = o.id
          WHERE m."userId" = $1 AND m.role = 'owner' AND o.name = $2`,
        [a.id, orgName],
      );
      orgId = row.id;
      // Chosen in the top bar at once.
      expect(await switcher(pageA).inputValue()).toBe(orgId);
      // On the Free plan: no pool, and seats to buy on the Team plan.
      await sectionA('Credit pool today')
        .getByText(/has no credit pool/)
        .waitFor();
      await sectionA('Seats')
        .getByRole('button', { name: 'Buy Team seats' })
        .waitFor();
    });

    await step(pageA, 'orgs-free-plan-refused', async () => {
      await pageA.goto(`${base}/`);
      await pageA.getByText(`Billed to ${orgName}’s credit pool.`).waitFor();
      await pageA.getByLabel('Model').selectOption('local/echo');
      await pageA.getByLabel('Message', { exact: true }).fill('no pool yet');
      await pageA.getByRole('button', { name: 'Send' }).click();
      const alert = pageA.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain(
        `${orgName} has no paid plan`,
      );
    });

    await step(pageA, 'orgs-seat-checkout', async () => {
      // What the client asks the service for, and that it sends the buyer on; the providers' side is
      // tested with the checkout itself.
      let asked: unknown;
      await pageA.route('**/v1/billing/checkout', async (route) => {
        asked = route.request().postDataJSON();
        await route.fulfill({
          status: 201,
          json: {
            checkoutId: randomUUID(),
            provider: 'paddle',
            url: `${base}/billing/canceled`,
          },
        });
      });
      await pageA.goto(`${base}/organization`);
      const seats = sectionA('Seats');
      await seats.getByLabel('Seats').fill('3');
      await seats.getByText('Total: $180.00 / month').waitFor();
      await seats.getByLabel('Paddle').check();
      await seats.getByRole('button', { name: 'Buy Team seats' }).click();
      await pageA.waitForURL(`${base}/billing/canceled`);
      await pageA.unroute('**/v1/billing/checkout');
      expect(asked).toEqual({
        planId: 'team',
        provider: 'paddle',
        organizationId: orgId,
        seats: 3,
      });
    });

    // The plan, the seats and the subscription, as a confirmed checkout would set them.
    await sql(
      `WITH s AS (
         INSERT INTO "Subscription" (id, "userId", "planCode", provider, "providerSubscriptionId", status, "lastEventAt", "updatedAt", "organizationId", seats)
         VALUES (gen_random_uuid(), $2, 'team', 'stripe', 'sub_' || gen_random_uuid(), 'active', now(), now(), $1, 5) RETURNING id
       )
       UPDATE "Organization" SET "planCode" = 'team', seats = 5, "planSubscriptionId" = (SELECT id FROM s) WHERE id = $1`,
      [orgId, a.id],
    );

    await step(pageA, 'orgs-invite', async () => {
      await pageA.goto(`${base}/organization`);
      const pool = sectionA('Credit pool today');
      await pool.getByText('Daily pool').waitFor();
      expect(await pool.locator('.org-pool-used').textContent()).toBe(
        '0 credits',
      );
      const invitations = sectionA('Invitations');
      await invitations.getByLabel('Email address to invite').fill(bEmail);
      await invitations.getByLabel('Their role').selectOption('member');
      await invitations
        .getByRole('button', { name: 'Send invitation' })
        .click();
      await invitations.getByText(`Invitation sent to ${bEmail}.`).waitFor();
      await invitations
        .getByRole('list', { name: 'Pending invitations' })
        .getByText(bEmail)
        .waitFor();
    });

    await step(pageA, 'orgs-seat-change', async () => {
      // A paid organization changes its seats instead of buying them (the provider answers by webhook).
      let asked: unknown;
      await pageA.route(`**/v1/orgs/${orgId}/subscription`, async (route) => {
        asked = route.request().postDataJSON();
        await route.fulfill({
          status: 202,
          json: {
            seats: 6,
            status: 'pending',
            currentSeats: 5,
            provider: 'stripe',
          },
        });
      });
      const seats = sectionA('Seats');
      await seats.getByLabel('Number of seats').fill('6');
      await seats.getByRole('button', { name: 'Change seats' }).click();
      await seats
        .getByText('Stripe was asked for 6 seats (you have 5 now)')
        .waitFor();
      await pageA.unroute(`**/v1/orgs/${orgId}/subscription`);
      expect(asked).toEqual({ seats: 6 });
    });

    await step(pageA, 'orgs-a11y', async () => {
      await pageA.waitForLoadState('networkidle');
      expect(await axeFindings(pageA)).toEqual([]);
    });

    const token = invitationTokenOf(await smtp.waitForMail(bEmail));
    const { page: pageB } = await newPage({ width: 390, height: 844 });

    await step(pageB, 'orgs-b-opens-link-signed-out', async () => {
      await pageB.goto(
        `${base}/invitations/accept?token=${encodeURIComponent(token)}`,
      );
      await pageB.getByRole('heading', { name: 'Sign in' }).waitFor();
      await pageB.getByText('You are invited to an organization.').waitFor();
      await pageB.getByRole('link', { name: 'Sign up' }).click();
      await pageB.getByRole('heading', { name: 'Create an account' }).waitFor();
      // The invitation is kept through the detour.
      await pageB.getByText('You are invited to an organization.').waitFor();
      await pageB.getByLabel('Email').fill(bEmail);
      await pageB.getByLabel('Password').fill(PASSWORD);
      await pageB.getByRole('button', { name: 'Sign up' }).click();
      await pageB
        .getByRole('heading', { name: 'Invitation to an organization' })
        .waitFor();
    });

    await step(pageB, 'orgs-b-must-verify', async () => {
      await pageB.getByRole('button', { name: 'Accept invitation' }).click();
      const alert = pageB.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/Verify your email address/);
      await pageB
        .getByRole('button', { name: 'Resend the verification mail' })
        .waitFor();
      expect(await axeFindings(pageB)).toEqual([]);
    });

    await step(pageB, 'orgs-b-verifies-and-accepts', async () => {
      const verification = verificationTokenOf(
        await smtp.waitForMail(bEmail, VERIFY_SUBJECT),
      );
      await pageB.goto(`${base}/verify-email?token=${verification}`);
      await pageB.getByText('Your email address is verified.').waitFor();
      await pageB.getByRole('link', { name: 'Continue to the app' }).click();
      await pageB.getByRole('button', { name: 'Accept invitation' }).click();
      await pageB.getByText(`You joined ${orgName} as member.`).waitFor();
      expect(await switcher(pageB).inputValue()).toBe(orgId);
    });
    const [b] = await sql<{ id: string }>(
      `SELECT id FROM "User" WHERE email = $1`,
      [bEmail],
    );

    let creditsA = 0;
    let creditsB = 0;
    await step(pageA, 'orgs-a-chats', async () => {
      await pageA.goto(`${base}/`);
      await pageA.getByText(`Billed to ${orgName}’s credit pool.`).waitFor();
      creditsA = await chat(pageA, 'hello from the owner');
      expect(creditsA).toBeGreaterThan(0);
    });
    await step(pageB, 'orgs-b-chats', async () => {
      // A reload keeps the choice (localStorage).
      await pageB.goto(`${base}/`);
      await pageB.getByText(`Billed to ${orgName}’s credit pool.`).waitFor();
      creditsB = await chat(pageB, 'hello from the member');
      expect(creditsB).toBeGreaterThan(0);
      await pageB.getByText(/credits left today in /).waitFor();
    });
    const total = creditsA + creditsB;

    // The pool paid for both runs, and each ledger entry names the organization.
    await eventually(async () => {
      const [usage] = await sql<{ used: number }>(
        `SELECT used FROM "OrgDailyUsage" WHERE "organizationId" = $1`,
        [orgId],
      );
      return usage?.used === total;
    }, 10_000);
    const entries = await sql<{ userId: string; credits: number }>(
      `SELECT "userId", credits FROM "LedgerEntry" WHERE "organizationId" = $1 ORDER BY "createdAt"`,
      [orgId],
    );
    expect(entries).toEqual([
      { userId: a.id, credits: creditsA },
      { userId: b.id, credits: creditsB },
    ]);

    await step(pageA, 'orgs-a-sees-pool-members-usage', async () => {
      await pageA.goto(`${base}/organization`);
      const pool = sectionA('Credit pool today');
      await pool.getByText('Daily pool').waitFor();
      expect(numberIn(await pool.locator('.org-pool-used').textContent())).toBe(
        total,
      );
      expect(
        numberIn(await pool.locator('.org-member-used').textContent()),
      ).toBe(creditsA);
      const members = sectionA('Members').getByRole('list', {
        name: `Members of ${orgName}`,
      });
      const memberB = members.getByRole('listitem').filter({ hasText: bEmail });
      expect(await memberB.locator('.org-role').textContent()).toBe('Member');
      await members
        .getByRole('listitem')
        .filter({ hasText: `${a.email} (you)` })
        .locator('.org-role')
        .filter({ hasText: /^Owner$/ })
        .waitFor();
      const usage = sectionA('Usage');
      const totals = usage.locator('.org-usage-totals li');
      await expectCount(totals, 2);
      expect(await totals.filter({ hasText: bEmail }).textContent()).toBe(
        `${bEmail}: ${creditsText(creditsB)} in 1 run`,
      );
      expect(await totals.filter({ hasText: a.email }).textContent()).toBe(
        `${a.email}: ${creditsText(creditsA)} in 1 run`,
      );
      await expectCount(usage.locator('tbody tr'), 2);
      // The invitation was used: no longer pending.
      await sectionA('Invitations')
        .getByText('No pending invitations.')
        .waitFor();
    });

    await step(pageA, 'orgs-a-caps-b', async () => {
      const memberB = sectionA('Members')
        .getByRole('listitem')
        .filter({ hasText: bEmail });
      await memberB.getByText(`Change ${bEmail}`).click();
      await memberB.getByLabel('Daily credit cap').fill('500');
      await memberB.getByRole('button', { name: 'Save changes' }).click();
      await memberB.getByText('Daily cap: 500 credits').waitFor();
      const [row] = await sql<{ dailyCreditLimit: number }>(
        `SELECT "dailyCreditLimit" FROM "OrgMember" WHERE "organizationId" = $1 AND "userId" = $2`,
        [orgId, b.id],
      );
      expect(row.dailyCreditLimit).toBe(500);
    });

    await step(pageB, 'orgs-b-sees-member-view', async () => {
      await pageB.goto(`${base}/organization`);
      const pool = pageB.getByRole('region', { name: 'Credit pool today' });
      await pool.getByText('Daily pool').waitFor();
      expect(numberIn(await pool.locator('.org-pool-used').textContent())).toBe(
        total,
      );
      expect(
        numberIn(await pool.locator('.org-member-used').textContent()),
      ).toBe(creditsB);
      await pool.getByText('500 credits', { exact: true }).waitFor();
      // A member manages nothing: no invitations, usage or seats, and no change forms.
      await expectCount(pageB.getByRole('region', { name: 'Invitations' }), 0);
      await expectCount(pageB.getByRole('region', { name: 'Usage' }), 0);
      await expectCount(pageB.getByRole('region', { name: 'Seats' }), 0);
      await expectCount(pageB.getByText(/^Change /), 0);
      await pageB.waitForLoadState('networkidle');
      expect(await axeFindings(pageB)).toEqual([]);
    });

    await step(pageA, 'orgs-a-shares-a-skill', async () => {
      await pageA.goto(`${base}/skills`);
      await pageA
        .getByRole('heading', { name: `Skills of ${orgName}` })
        .waitFor();
      await pageA.getByLabel('Name', { exact: true }).fill('Team greeter');
      await pageA
        .getByRole('textbox', { name: 'Instruction', exact: true })
        .fill('Greet the team.');
      await pageA.getByRole('button', { name: 'Create Skill' }).click();
      await pageA
        .getByRole('heading', { name: 'Team greeter', level: 2 })
        .waitFor();
      const [skill] = await sql<{ organizationId: string | null }>(
        `SELECT "organizationId" FROM "Skill" WHERE name = 'Team greeter' AND "organizationId" = $1`,
        [orgId],
      );
      expect(skill.organizationId).toBe(orgId);
      // Back in Personal, the Skill is not among A's own.
      await switcher(pageA).selectOption({ label: 'Personal' });
      await pageA.getByRole('heading', { name: 'Your Skills' }).waitFor();
      await expectCount(pageA.getByRole('link', { name: 'Team greeter' }), 0);
      await switcher(pageA).selectOption({ label: orgName });
      await pageA.getByRole('link', { name: 'Team greeter' }).waitFor();
    });

    await step(pageB, 'orgs-b-runs-the-skill', async () => {
      await pageB.goto(`${base}/skills`);
      await pageB
        .getByRole('heading', { name: `Skills of ${orgName}` })
        .waitFor();
      await expectCount(pageB.getByRole('heading', { name: 'New Skill' }), 0);
      await expectCount(pageB.getByRole('heading', { name: 'Import' }), 0);
      await pageB.getByRole('link', { name: 'Team greeter' }).click();
      await pageB
        .getByRole('heading', { name: 'Team greeter', level: 2 })
        .waitFor();
      await expectCount(
        pageB.getByRole('heading', { name: 'Publish a new version' }),
        0,
      );
      await pageB
        .getByRole('textbox', { name: 'Input (required)' })
        .fill('hi team');
      await pageB.getByLabel('Model').selectOption('local/echo');
      await pageB.getByRole('button', { name: 'Run', exact: true }).click();
      await pageB.locator('.run-answer .usage').waitFor();
    });
    await eventually(async () => {
      const rows = await sql<{ userId: string; skillId: string | null }>(
        `SELECT "userId", "skillId" FROM "LedgerEntry" WHERE "organizationId" = $1`,
        [orgId],
      );
      return rows.some((row) => row.userId === b.id && row.skillId !== null);
    }, 10_000);
  }, 180_000);
});
