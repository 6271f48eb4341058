import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { chat, listen } from './support/chat-client';
import { eventually } from './support/eventually';
import { startFakeSmtp } from './support/fake-smtp';
import {
  PASSWORD,
  registerUser,
  registerVerifiedUser,
  verifyEmail,
} from './support/factories';
import {
  createOrg as createOrgOf,
  giveTeamPlan,
  inviteByMail,
  joinByMail,
} from './support/orgs';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

type Account = Awaited<ReturnType<typeof registerUser>>;

const echo = (organizationId?: string) => ({
  model: 'local/echo',
  idempotencyKey: randomUUID(),
  messages: [{ role: 'user', content: 'hello pool' }],
  ...(organizationId ? { organizationId } : {}),
});

async function auditActions(orgId: string): Promise<string[]> {
  const rows = await sql<{ action: string }>(
    `SELECT action FROM "AuditLog" WHERE "targetType" = 'organization' AND "targetId" = $1 ORDER BY "createdAt", id`,
    [orgId],
  );
  return rows.map((row) => row.action);
}

describe('organizations (issue 30)', () => {
  let t: TestApp;
  let other: TestApp;
  let base: string;
  let otherBase: string;
  let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;

  beforeAll(async () => {
    smtp = await startFakeSmtp();
    const env = { SMTP_URL: smtp.url, ECHO_DELAY_MS: '0' };
    [t, other] = [await bootTestApp(env), await bootTestApp(env)];
    [base, otherBase] = [await listen(t), await listen(other)];
  });
  afterAll(async () => {
    await t.close();
    await other.close();
    await smtp.close();
  });

  const createOrg = (owner: Account, name?: string) =>
    createOrgOf(t.http, owner, name);
  const invite = (by: Account, orgId: string, email: string, role?: string) =>
    inviteByMail(t.http, smtp.mails, by, orgId, email, role);
  const join = (owner: Account, orgId: string, role?: string) =>
    joinByMail(t.http, smtp.mails, owner, orgId, role);

  describe('organizations', () => {
    it('creates one with the caller as owner, lists, shows, renames, and hides it from anyone else', async () => {
      const owner = await registerUser(t.http);
      const created = await t.http
        .post('/v1/orgs')
        .set('Cookie', owner.cookie)
        .send({ name: '  Acme  ' })
        .expect(201);
      expect(created.body).toMatchObject({
        name: 'Acme',
        role: 'owner',
        plan: { code: 'free' },
        seats: 0,
        memberCount: 1,
      });
      const id = created.body.id as string;
      const list = await t.http
        .get('/v1/orgs')
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(list.body.data).toEqual([
        expect.objectContaining({ id, role: 'owner' }),
      ]);
      await t.http
        .patch(`/v1/orgs/${id}`)
        .set('Cookie', owner.cookie)
        .send({ name: 'Acme Inc' })
        .expect(200);
      const shown = await t.http
        .get(`/v1/orgs/${id}`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(shown.body.name).toBe('Acme Inc');

      const stranger = await registerUser(t.http);
      for (const call of [
        t.http.get(`/v1/orgs/${id}`),
        t.http.patch(`/v1/orgs/${id}`).send({ name: 'Mine' }),
        t.http.delete(`/v1/orgs/${id}`),
        t.http.get(`/v1/orgs/${id}/members`),
        t.http.get(`/v1/orgs/${id}/quota`),
      ])
        expect((await call.set('Cookie', stranger.cookie)).status).toBe(404);
      await t.http
        .get('/v1/orgs/not-a-uuid')
        .set('Cookie', owner.cookie)
        .expect(404);
      expect(await auditActions(id)).toEqual(['org.create', 'org.rename']);
    });

    it('refuses a bad name with a problem naming it, and anonymous callers', async () => {
      const owner = await registerUser(t.http);
      for (const body of [
        {},
        { name: '' },
        { name: '   ' },
        { name: 'x'.repeat(101) },
        { name: 'Acme\r\nBcc: x@example.com' },
        { name: 3 },
      ]) {
        const res = await t.http
          .post('/v1/orgs')
          .set('Cookie', owner.cookie)
          .send(body)
          .expect(400);
        expect(res.body.errors[0].field).toBe('name');
      }
      await t.http.post('/v1/orgs').send({ name: 'x' }).expect(401);
      expect(
        (await t.http.get('/v1/orgs').set('Cookie', owner.cookie)).body.data,
      ).toEqual([]);
    });

    it('is deleted by its owner only, and not while a subscription is active', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const admin = await join(owner, id, 'admin');
      await t.http
        .delete(`/v1/orgs/${id}`)
        .set('Cookie', admin.cookie)
        .expect(403);
      const [subscription] = await sql<{ id: string }>(
        `INSERT INTO "Subscription" (id, "userId", "planCode", provider, "providerSubscriptionId", status, "lastEventAt", "updatedAt", "organizationId", seats)
         VALUES (gen_random_uuid(), $1, 'team', 'stripe', 'sub_' || gen_random_uuid(), 'active', now(), now(), $2, 3) RETURNING id::text`,
        [owner.id, id],
      );
      const refused = await t.http
        .delete(`/v1/orgs/${id}`)
        .set('Cookie', owner.cookie)
        .expect(409);
      expect(refused.body.code).toBe('organization_has_subscription');
      await sql(`UPDATE "Subscription" SET status = 'canceled' WHERE id = $1`, [
        subscription.id,
      ]);
      await t.http
        .delete(`/v1/orgs/${id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      await t.http
        .get(`/v1/orgs/${id}`)
        .set('Cookie', owner.cookie)
        .expect(404);
      expect(await auditActions(id)).toContain('org.delete');
    });
  });

  describe('invitations and members', () => {
    it('mails a single-use link that only the verified invited address accepts', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const invitee = await registerUser(t.http);
      const token = await invite(owner, id, invitee.email, 'admin');
      const pending = await t.http
        .get(`/v1/orgs/${id}/invitations`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(pending.body.data).toEqual([
        expect.objectContaining({ email: invitee.email, role: 'admin' }),
      ]);
      const stored = await sql<{ tokenHash: string }>(
        `SELECT "tokenHash" FROM "OrgInvitation" WHERE "organizationId" = $1`,
        [id],
      );
      expect(stored[0].tokenHash).not.toContain(token);

      const unverified = await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', invitee.cookie)
        .send({ token })
        .expect(403);
      expect(unverified.body.code).toBe('email_unverified');
      const someoneElse = await registerVerifiedUser(t.http);
      const mismatch = await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', someoneElse.cookie)
        .send({ token })
        .expect(403);
      expect(mismatch.body.code).toBe('invitation_mismatch');

      await verifyEmail(t.http, invitee);
      const accepted = await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', invitee.cookie)
        .send({ token })
        .expect(200);
      expect(accepted.body).toMatchObject({
        id,
        role: 'admin',
        memberCount: 2,
      });
      const again = await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', invitee.cookie)
        .send({ token })
        .expect(410);
      expect(again.body.code).toBe('invitation_gone');
      const members = await t.http
        .get(`/v1/orgs/${id}/members`)
        .set('Cookie', invitee.cookie)
        .expect(200);
      expect(
        members.body.data.map((m: { email: string; role: string }) => [
          m.email,
          m.role,
        ]),
      ).toEqual([
        [owner.email, 'owner'],
        [invitee.email, 'admin'],
      ]);
      expect(await auditActions(id)).toEqual([
        'org.create',
        'org.invitation.create',
        'org.member.join',
      ]);
    });

    it('sends invitations only from a verified account when REQUIRE_EMAIL_VERIFICATION is on', async () => {
      const strict = await bootTestApp({
        SMTP_URL: smtp.url,
        REQUIRE_EMAIL_VERIFICATION: 'true',
      });
      try {
        const owner = await registerUser(strict.http);
        const id = await createOrgOf(strict.http, owner);
        const refused = await strict.http
          .post(`/v1/orgs/${id}/invitations`)
          .set('Cookie', owner.cookie)
          .send({ email: 'someone@example.com', role: 'member' })
          .expect(403);
        expect(refused.body.code).toBe('email_unverified');
        await verifyEmail(strict.http, owner);
        await strict.http
          .post(`/v1/orgs/${id}/invitations`)
          .set('Cookie', owner.cookie)
          .send({ email: 'someone@example.com', role: 'member' })
          .expect(201);
      } finally {
        await strict.close();
      }
    });

    it('answers 410 for a revoked or expired link and 404 for an unknown one', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const invitee = await registerVerifiedUser(t.http);
      const revokedToken = await invite(owner, id, invitee.email);
      const [row] = (
        await t.http
          .get(`/v1/orgs/${id}/invitations`)
          .set('Cookie', owner.cookie)
      ).body.data as { id: string }[];
      await t.http
        .delete(`/v1/orgs/${id}/invitations/${row.id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      await t.http
        .delete(`/v1/orgs/${id}/invitations/${row.id}`)
        .set('Cookie', owner.cookie)
        .expect(404);
      await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', invitee.cookie)
        .send({ token: revokedToken })
        .expect(410);

      const expiredToken = await invite(owner, id, invitee.email);
      await sql(
        `UPDATE "OrgInvitation" SET "expiresAt" = now() - interval '1 second' WHERE "organizationId" = $1 AND "revokedAt" IS NULL`,
        [id],
      );
      await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', invitee.cookie)
        .send({ token: expiredToken })
        .expect(410);
      await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', invitee.cookie)
        .send({ token: 'x'.repeat(43) })
        .expect(404);
      await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', invitee.cookie)
        .send({})
        .expect(400);
      expect(
        (await t.http.get(`/v1/orgs/${id}/members`).set('Cookie', owner.cookie))
          .body.data,
      ).toHaveLength(1);
    });

    it('checks roles: members cannot invite, admins cannot make owners, only owners remove owners', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const admin = await join(owner, id, 'admin');
      const member = await join(owner, id, 'member');
      const memberInvites = await t.http
        .post(`/v1/orgs/${id}/invitations`)
        .set('Cookie', member.cookie)
        .send({ email: 'x@example.com', role: 'member' })
        .expect(403);
      expect(memberInvites.body.code).toBe('org_role_required');
      await t.http
        .post(`/v1/orgs/${id}/invitations`)
        .set('Cookie', admin.cookie)
        .send({ email: 'y@example.com', role: 'owner' })
        .expect(403);
      await t.http
        .patch(`/v1/orgs/${id}/members/${member.id}`)
        .set('Cookie', admin.cookie)
        .send({ role: 'owner' })
        .expect(403);
      await t.http
        .delete(`/v1/orgs/${id}/members/${owner.id}`)
        .set('Cookie', admin.cookie)
        .expect(403);
      await t.http
        .patch(`/v1/orgs/${id}/members/${member.id}`)
        .set('Cookie', admin.cookie)
        .send({ role: 'admin', dailyCreditLimit: 5 })
        .expect(200);
      const bad = await t.http
        .patch(`/v1/orgs/${id}/members/${member.id}`)
        .set('Cookie', owner.cookie)
        .send({ role: 'boss', dailyCreditLimit: -1 })
        .expect(400);
      expect(
        (bad.body.errors as { field: string }[]).map((e) => e.field).sort(),
      ).toEqual(['dailyCreditLimit', 'role']);
      await t.http
        .patch(`/v1/orgs/${id}/members/${member.id}`)
        .set('Cookie', owner.cookie)
        .send({})
        .expect(400);
      // A role change applies to the next request, on any instance.
      await t.http
        .patch(`/v1/orgs/${id}/members/${admin.id}`)
        .set('Cookie', owner.cookie)
        .send({ role: 'member' })
        .expect(200);
      await other.http
        .get(`/v1/orgs/${id}/invitations`)
        .set('Cookie', admin.cookie)
        .expect(403);
    });

    it('keeps the last owner: they can neither leave nor be demoted', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const second = await join(owner, id, 'admin');
      const leave = await t.http
        .delete(`/v1/orgs/${id}/members/${owner.id}`)
        .set('Cookie', owner.cookie)
        .expect(409);
      expect(leave.body.code).toBe('last_owner');
      await t.http
        .patch(`/v1/orgs/${id}/members/${owner.id}`)
        .set('Cookie', owner.cookie)
        .send({ role: 'admin' })
        .expect(409);
      await t.http
        .patch(`/v1/orgs/${id}/members/${second.id}`)
        .set('Cookie', owner.cookie)
        .send({ role: 'owner' })
        .expect(200);
      await t.http
        .delete(`/v1/orgs/${id}/members/${owner.id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      await t.http
        .get(`/v1/orgs/${id}`)
        .set('Cookie', owner.cookie)
        .expect(404);
      expect(await auditActions(id)).toEqual(
        expect.arrayContaining(['org.member.update', 'org.member.leave']),
      );
    });

    it('decides on the roles as committed: a change waiting on the organization sees the demotion that came first', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const second = await join(owner, id, 'owner');
      const third = await join(owner, id, 'owner');
      const locker = new Client({
        connectionString: process.env.TEST_DATABASE_URL,
      });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(
          `SELECT 1 FROM "Organization" WHERE id = $1 FOR NO KEY UPDATE`,
          [id],
        );
        // The second owner's demotion of the third waits on the organization...
        const waiting = t.http
          .patch(`/v1/orgs/${id}/members/${third.id}`)
          .set('Cookie', second.cookie)
          .send({ role: 'member' })
          .then((res) => res);
        await eventually(async () => {
          const [row] = await sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM "Organization"%'`,
          );
          return row.n > 0;
        }, 10_000);
        // ...while the second owner is made an admin, and that commits first.
        await locker.query(
          `UPDATE "OrgMember" SET role = 'admin' WHERE "organizationId" = $1 AND "userId" = $2`,
          [id, second.id],
        );
        await locker.query('COMMIT');
        const res = await waiting;
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('org_role_required');
      } finally {
        await locker.end();
      }
      const [row] = await sql<{ role: string }>(
        `SELECT role::text FROM "OrgMember" WHERE "organizationId" = $1 AND "userId" = $2`,
        [id, third.id],
      );
      expect(row.role).toBe('owner');
    });

    it('revokes the invitations of a member who is removed or may no longer send them', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const coOwner = await join(owner, id, 'owner');
      const admin = await join(owner, id, 'admin');
      const invitee = await registerVerifiedUser(t.http);
      const ownerInvite = await invite(coOwner, id, invitee.email, 'owner');
      const another = await registerVerifiedUser(t.http);
      const memberInvite = await invite(admin, id, another.email, 'member');
      await t.http
        .delete(`/v1/orgs/${id}/members/${coOwner.id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      await t.http
        .patch(`/v1/orgs/${id}/members/${admin.id}`)
        .set('Cookie', owner.cookie)
        .send({ role: 'member' })
        .expect(200);
      for (const [who, token] of [
        [invitee, ownerInvite],
        [another, memberInvite],
      ] as const) {
        const res = await t.http
          .post('/v1/orgs/invitations/accept')
          .set('Cookie', who.cookie)
          .send({ token })
          .expect(410);
        expect(res.body.code).toBe('invitation_gone');
      }
    });

    it("keeps owners' roles and caps to owners", async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const admin = await join(owner, id, 'admin');
      const res = await t.http
        .patch(`/v1/orgs/${id}/members/${owner.id}`)
        .set('Cookie', admin.cookie)
        .send({ dailyCreditLimit: 0 })
        .expect(403);
      expect(res.body.code).toBe('org_role_required');
      const [row] = await sql<{ cap: number | null }>(
        `SELECT "dailyCreditLimit" AS cap FROM "OrgMember" WHERE "organizationId" = $1 AND "userId" = $2`,
        [id, owner.id],
      );
      expect(row.cap).toBeNull();
    });

    it('never has more members than seats on a paid plan (409 seats_exhausted on invite and accept)', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const first = await registerVerifiedUser(t.http);
      const second = await registerVerifiedUser(t.http);
      const firstToken = await invite(owner, id, first.email);
      const secondToken = await invite(owner, id, second.email);
      await giveTeamPlan(id, 2);
      await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', first.cookie)
        .send({ token: firstToken })
        .expect(200);
      const full = await t.http
        .post('/v1/orgs/invitations/accept')
        .set('Cookie', second.cookie)
        .send({ token: secondToken })
        .expect(409);
      expect(full.body.code).toBe('seats_exhausted');
      const inviteRefused = await t.http
        .post(`/v1/orgs/${id}/invitations`)
        .set('Cookie', owner.cookie)
        .send({ email: 'third@example.com', role: 'member' })
        .expect(409);
      expect(inviteRefused.body.code).toBe('seats_exhausted');
      expect(
        (await t.http.get(`/v1/orgs/${id}`).set('Cookie', owner.cookie)).body
          .memberCount,
      ).toBe(2);
    });
  });

  describe('the credit pool', () => {
    it('refuses runs for an organization without a paid plan, and for non-members', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const res = await chat(base, owner.cookie, echo(id)).response;
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).code).toBe('org_plan_required');
      await giveTeamPlan(id, 1);
      const stranger = await registerUser(t.http);
      expect(
        (await chat(base, stranger.cookie, echo(id)).response).status,
      ).toBe(404);
      const bad = await chat(base, owner.cookie, echo('nope')).response;
      expect(bad.status).toBe(400);
      expect(
        await sql(`SELECT 1 FROM "ChatRequest" WHERE "userId" = $1`, [
          stranger.id,
        ]),
      ).toEqual([]);
    });

    it('bills the pool (not the personal quota) and shows pool, cap and usage per member per day', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const member = await join(owner, id);
      await giveTeamPlan(id, 3);
      for (const who of [owner, member, member]) {
        const res = await chat(base, who.cookie, echo(id)).response;
        expect(res.status).toBe(200);
      }
      const quota = await t.http
        .get(`/v1/orgs/${id}/quota`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(quota.body).toMatchObject({
        plan: { code: 'team' },
        seats: 3,
        pool: { limit: 30_000, used: 3, reserved: 0, remaining: 29_997 },
        member: { limit: null, used: 2, reserved: 0, remaining: 29_997 },
      });
      const personal = await t.http
        .get('/v1/billing/quota')
        .set('Cookie', member.cookie)
        .expect(200);
      expect(personal.body.used).toBe(0);
      const ledger = await sql<{ organizationId: string }>(
        `SELECT "organizationId"::text FROM "LedgerEntry" WHERE "userId" = $1`,
        [member.id],
      );
      expect(ledger).toEqual([{ organizationId: id }, { organizationId: id }]);
      const today = new Date().toISOString().slice(0, 10);
      const usage = await t.http
        .get(`/v1/orgs/${id}/usage?from=${today}&to=${today}`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(usage.body.data).toEqual(
        expect.arrayContaining([
          {
            day: today,
            userId: owner.id,
            email: owner.email,
            credits: 1,
            runs: 1,
          },
          {
            day: today,
            userId: member.id,
            email: member.email,
            credits: 2,
            runs: 2,
          },
        ]),
      );
      await t.http
        .get(`/v1/orgs/${id}/usage`)
        .set('Cookie', member.cookie)
        .expect(403);
      for (const query of [
        'from=2026-02-30',
        'from=2026-05-02&to=2026-05-01',
        'from=2020-01-01&to=2026-01-01',
        'to=yesterday',
        'from=0000-01-01&to=0000-01-02',
      ])
        await t.http
          .get(`/v1/orgs/${id}/usage?${query}`)
          .set('Cookie', owner.cookie)
          .expect(400);
      // Conversations stay the member's own.
      const conversations = await t.http
        .get('/v1/conversations')
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(conversations.body.data).toHaveLength(1);
    });

    it("applies a member's own daily cap, set by an admin", async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const member = await join(owner, id);
      await giveTeamPlan(id, 2);
      await t.http
        .patch(`/v1/orgs/${id}/members/${member.id}`)
        .set('Cookie', owner.cookie)
        .send({ dailyCreditLimit: 2 })
        .expect(200);
      for (let run = 0; run < 2; run += 1)
        expect(
          (await chat(base, member.cookie, echo(id)).response).status,
        ).toBe(200);
      const capped = await chat(base, member.cookie, echo(id)).response;
      expect(capped.status).toBe(429);
      expect(JSON.parse(capped.body).code).toBe('quota_exceeded');
      expect(capped.headers['retry-after']).toBeDefined();
      // The owner, without a cap, still spends the pool; the member still has their personal quota.
      expect((await chat(base, owner.cookie, echo(id)).response).status).toBe(
        200,
      );
      expect((await chat(base, member.cookie, echo()).response).status).toBe(
        200,
      );
      const quota = await t.http
        .get(`/v1/orgs/${id}/quota`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(quota.body.member).toMatchObject({
        limit: 2,
        used: 2,
        remaining: 0,
      });
      expect(quota.body.pool.used).toBe(3);
    });

    it('never overspends the pool when members race for its last credits on two instances', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const members = [owner];
      for (let n = 0; n < 3; n += 1) members.push(await join(owner, id));
      await giveTeamPlan(id, 4);
      const today = new Date().toISOString().slice(0, 10);
      // 5 credits left of 40,000.
      await sql(
        `INSERT INTO "OrgDailyUsage" ("organizationId", day, used, reserved) VALUES ($1, $2, 39995, 0)`,
        [id, today],
      );
      const calls = Array.from({ length: 24 }, (_, n) =>
        chat(
          n % 2 === 0 ? base : otherBase,
          members[n % members.length].cookie,
          echo(id),
        ),
      );
      const statuses = (
        await Promise.all(calls.map((call) => call.response))
      ).map((res) => res.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(5);
      expect(statuses.filter((status) => status === 429)).toHaveLength(19);
      const [pool] = await sql<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM "OrgDailyUsage" WHERE "organizationId" = $1`,
        [id],
      );
      expect(pool).toEqual({ used: 40_000, reserved: 0 });
      const [billed] = await sql<{ n: number; credits: number }>(
        `SELECT count(*)::int AS n, COALESCE(SUM(credits), 0)::int AS credits FROM "LedgerEntry" WHERE "organizationId" = $1`,
        [id],
      );
      expect(billed).toEqual({ n: 5, credits: 5 });
    });

    it("refuses a removed member's next run on every instance, and replays their earlier one", async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const member = await join(owner, id);
      await giveTeamPlan(id, 2);
      const first = echo(id);
      expect((await chat(base, member.cookie, first).response).status).toBe(
        200,
      );
      await t.http
        .delete(`/v1/orgs/${id}/members/${member.id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      for (const url of [base, otherBase]) {
        const refused = await chat(url, member.cookie, echo(id)).response;
        expect(refused.status).toBe(404);
      }
      const replay = await chat(otherBase, member.cookie, first).response;
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      await other.http
        .get(`/v1/orgs/${id}/quota`)
        .set('Cookie', member.cookie)
        .expect(404);
      expect(await auditActions(id)).toContain('org.member.remove');
    });

    it("uses the organization plan's models", async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      await giveTeamPlan(id, 1);
      // Claude is not on the free plan but is on the team plan: refused as a personal run, accepted by the plan check for the pool.
      const personal = await chat(base, owner.cookie, {
        ...echo(),
        model: 'anthropic/claude-haiku-4-5',
      }).response;
      expect(personal.status).toBe(403);
      const pooled = await chat(base, owner.cookie, {
        ...echo(id),
        model: 'anthropic/claude-haiku-4-5',
      }).response;
      // Past the plan check: the provider has no key here.
      expect(JSON.parse(pooled.body).code).toBe('provider_not_configured');
    });
  });

  describe('accounts', () => {
    const deleteMe = (who: Account) =>
      t.http
        .delete('/v1/auth/me')
        .set('Cookie', who.cookie)
        .send({ password: PASSWORD, confirm: 'DELETE' });

    it('refuses to delete the last owner of an organization with other members, naming it, until ownership is passed on', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner, 'Keep Me');
      const member = await join(owner, id);
      const skill = await t.http
        .post(`/v1/orgs/${id}/skills`)
        .set('Cookie', owner.cookie)
        .send({ name: 'Shared', instruction: 'Be brief.' })
        .expect(201);
      const refused = await deleteMe(owner).expect(409);
      expect(refused.body.code).toBe('last_owner');
      expect(refused.body.detail).toContain('Keep Me');
      expect(refused.body.organizations).toEqual([{ id, name: 'Keep Me' }]);
      await t.http.get('/v1/auth/me').set('Cookie', owner.cookie).expect(200);

      await t.http
        .patch(`/v1/orgs/${id}/members/${member.id}`)
        .set('Cookie', owner.cookie)
        .send({ role: 'owner' })
        .expect(200);
      await deleteMe(owner).expect(204);
      const left = await t.http
        .get(`/v1/orgs/${id}`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(left.body.memberCount).toBe(1);
      // The organization's Skill its author wrote stays the organization's.
      await t.http
        .get(`/v1/orgs/${id}/skills/${skill.body.id}`)
        .set('Cookie', member.cookie)
        .expect(200);
    });

    it("gives back to the pool what the account's live runs had reserved", async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      const member = await join(owner, id);
      await giveTeamPlan(id, 2);
      const today = new Date().toISOString().slice(0, 10);
      // A claim of the member's whose instance died: 40 credits held on the pool and the member's day.
      await sql(
        `WITH c AS (
           INSERT INTO "Conversation" (id, "userId", title, "createdAt", "updatedAt") VALUES (gen_random_uuid(), $1, 't', now(), now()) RETURNING id
         )
         INSERT INTO "ChatRequest" (id, "userId", "idempotencyKey", fingerprint, status, "conversationId", "modelId", "usageDay", "reservedCredits", "leaseExpiresAt", "organizationId")
         SELECT gen_random_uuid(), $1, 'k', 'f', 'streaming', c.id, 'local/echo', $3, 40, now() + interval '1 hour', $2 FROM c`,
        [member.id, id, today],
      );
      await sql(
        `INSERT INTO "OrgDailyUsage" ("organizationId", day, used, reserved) VALUES ($1, $2, 3, 40)`,
        [id, today],
      );
      await sql(
        `INSERT INTO "OrgMemberDailyUsage" ("organizationId", "userId", day, used, reserved) VALUES ($1, $3, $2, 0, 40)`,
        [id, today, member.id],
      );
      await deleteMe(member).expect(204);
      const [pool] = await sql<{ used: number; reserved: number }>(
        `SELECT used, reserved FROM "OrgDailyUsage" WHERE "organizationId" = $1`,
        [id],
      );
      expect(pool).toEqual({ used: 3, reserved: 0 });
    });

    it('deletes an organization with its account when the account is its only member', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner);
      await deleteMe(owner).expect(204);
      expect(
        await sql(`SELECT 1 FROM "Organization" WHERE id = $1`, [id]),
      ).toEqual([]);
    });

    it('exports the memberships with the account, and the pool that paid each ledger entry', async () => {
      const owner = await registerUser(t.http);
      const id = await createOrg(owner, 'Exported');
      const member = await join(owner, id, 'admin');
      await giveTeamPlan(id, 2);
      expect((await chat(base, member.cookie, echo(id)).response).status).toBe(
        200,
      );
      const exported = await t.http
        .get('/v1/auth/me/export')
        .set('Cookie', member.cookie)
        .expect(200);
      const doc = JSON.parse(exported.text) as {
        memberships: unknown[];
        ledger: { organizationId: string | null }[];
      };
      expect(doc.memberships).toEqual([
        {
          organizationId: id,
          name: 'Exported',
          role: 'admin',
          dailyCreditLimit: null,
          joinedAt: expect.any(String),
        },
      ]);
      expect(doc.ledger.map((entry) => entry.organizationId)).toEqual([id]);
    });
  });
});
