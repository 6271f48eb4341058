import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import { listen, post, StreamedResponse } from './support/chat-client';
import { startFakeSmtp } from './support/fake-smtp';
import { registerVerifiedUser } from './support/factories';
import {
  createOrg as createOrgOf,
  giveTeamPlan,
  joinByMail,
} from './support/orgs';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

type Account = Awaited<ReturnType<typeof registerVerifiedUser>>;

const exportSchema = JSON.parse(
  readFileSync('schemas/skill-export.schema.json', 'utf8'),
) as object;
const inputSchema = {
  type: 'object',
  properties: { text: { type: 'string', minLength: 1 } },
  required: ['text'],
  additionalProperties: false,
};
const portable = {
  name: 'Team portable',
  instruction: 'Do the team thing.',
  input_schema: inputSchema,
  output_schema: { type: 'string' },
  version: 7,
};

const today = () => new Date().toISOString().slice(0, 10);

/** A run body for the echo model (1 credit), with a fresh idempotency key unless given. */
const runBody = (
  input: unknown = 'hello team',
  extra: Record<string, unknown> = {},
) => ({
  model: 'local/echo',
  input,
  idempotencyKey: randomUUID(),
  ...extra,
});

/** The organization's pool for today (zeros when no row was written). */
async function poolOf(
  orgId: string,
): Promise<{ used: number; reserved: number }> {
  const [row] = await sql<{ used: number; reserved: number }>(
    `SELECT used, reserved FROM "OrgDailyUsage" WHERE "organizationId" = $1 AND day = $2::date`,
    [orgId, today()],
  );
  return row ?? { used: 0, reserved: 0 };
}

/** A member's share of the pool for today (zeros when no row was written). */
async function memberShareOf(
  orgId: string,
  userId: string,
): Promise<{ used: number; reserved: number }> {
  const [row] = await sql<{ used: number; reserved: number }>(
    `SELECT used, reserved FROM "OrgMemberDailyUsage" WHERE "organizationId" = $1 AND "userId" = $2 AND day = $3::date`,
    [orgId, userId, today()],
  );
  return row ?? { used: 0, reserved: 0 };
}

/** What the user's personal quota holds (used + reserved, every day). */
async function personalUsageOf(userId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT COALESCE(SUM(used + reserved), 0)::int AS n FROM "DailyUsage" WHERE "userId" = $1`,
    [userId],
  );
  return row.n;
}

interface LedgerRow {
  kind: string;
  status: string;
  organizationId: string | null;
  skillId: string | null;
  credits: number;
}

async function ledgerOf(userId: string): Promise<LedgerRow[]> {
  return sql<LedgerRow>(
    `SELECT kind::text, status::text, "organizationId"::text, "skillId"::text, credits
       FROM "LedgerEntry" WHERE "userId" = $1 ORDER BY "createdAt", id`,
    [userId],
  );
}

async function countOrgSkills(orgId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM "Skill" WHERE "organizationId" = $1`,
    [orgId],
  );
  return row.n;
}

async function chatRequestsOf(userId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM "ChatRequest" WHERE "userId" = $1`,
    [userId],
  );
  return row.n;
}

const problemOf = (res: StreamedResponse) =>
  JSON.parse(res.body) as { code: string; errors?: { field: string }[] };

describe('organization Skills (issue 30, point 3 and the Skill part of point 4)', () => {
  let t: TestApp;
  let base: string;
  let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;

  beforeAll(async () => {
    smtp = await startFakeSmtp();
    t = await bootTestApp({ SMTP_URL: smtp.url, ECHO_DELAY_MS: '0' });
    base = await listen(t);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const createOrg = (owner: Account, name?: string) =>
    createOrgOf(t.http, owner, name);
  const join = (owner: Account, orgId: string, role?: string) =>
    joinByMail(t.http, smtp.mails, owner, orgId, role);

  /** An organization with its owner, an admin and a plain member. */
  async function team(): Promise<{
    orgId: string;
    owner: Account;
    admin: Account;
    member: Account;
  }> {
    const owner = await registerVerifiedUser(t.http);
    const orgId = await createOrg(owner);
    const admin = await join(owner, orgId, 'admin');
    const member = await join(owner, orgId, 'member');
    return { orgId, owner, admin, member };
  }

  async function createOrgSkill(
    who: Account,
    orgId: string,
    body: Record<string, unknown> = {},
  ) {
    const res = await t.http
      .post(`/v1/orgs/${orgId}/skills`)
      .set('Cookie', who.cookie)
      .send({ name: 'Team summarizer', instruction: 'Summarize.', ...body })
      .expect(201);
    return res.body as {
      id: string;
      version: number;
      versions: unknown[];
    } & Record<string, unknown>;
  }

  async function createPersonalSkill(
    who: Account,
    body: Record<string, unknown> = {},
  ) {
    const res = await t.http
      .post('/v1/skills')
      .set('Cookie', who.cookie)
      .send({ name: 'Mine', instruction: 'Be mine.', ...body })
      .expect(201);
    return res.body as { id: string } & Record<string, unknown>;
  }

  const runOrgSkill = (
    who: Account,
    orgId: string,
    skillId: string,
    body: Record<string, unknown>,
  ) =>
    post(base, `/v1/orgs/${orgId}/skills/${skillId}/run`, who.cookie, body)
      .response;

  describe('writes by admins and owners', () => {
    it('creates, imports, publishes n+1 and deletes; the Skill belongs to the organization', async () => {
      const { orgId, owner, admin, member } = await team();
      const byOwner = await createOrgSkill(owner, orgId, {
        input_schema: inputSchema,
      });
      expect(byOwner).toEqual({
        id: expect.any(String),
        owner_id: owner.id,
        organization_id: orgId,
        allowed_tools: [],
        name: 'Team summarizer',
        version: 1,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        versions: [
          {
            version: 1,
            instruction: 'Summarize.',
            input_schema: inputSchema,
            output_schema: null,
            created_at: expect.any(String),
          },
        ],
      });
      const byAdmin = await createOrgSkill(admin, orgId, { name: 'By admin' });
      expect(byAdmin).toEqual(
        expect.objectContaining({
          owner_id: admin.id,
          organization_id: orgId,
          version: 1,
        }),
      );

      const imported = await t.http
        .post(`/v1/orgs/${orgId}/skills/import`)
        .set('Cookie', admin.cookie)
        .send(portable)
        .expect(201);
      expect(imported.body).toEqual(
        expect.objectContaining({
          owner_id: admin.id,
          organization_id: orgId,
          allowed_tools: [],
          name: portable.name,
          version: 7,
        }),
      );
      const exported = await t.http
        .get(`/v1/orgs/${orgId}/skills/${imported.body.id}/export`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(exported.body).toEqual(portable);

      // Publishing: an admin on the owner's Skill, the owner on the admin's import.
      const v2 = await t.http
        .post(`/v1/orgs/${orgId}/skills/${byOwner.id}/versions`)
        .set('Cookie', admin.cookie)
        .send({ instruction: 'Summarize, shorter.' })
        .expect(201);
      expect(v2.body).toEqual({
        version: 2,
        instruction: 'Summarize, shorter.',
        input_schema: null,
        output_schema: null,
        created_at: expect.any(String),
      });
      const v8 = await t.http
        .post(`/v1/orgs/${orgId}/skills/${imported.body.id}/versions`)
        .set('Cookie', owner.cookie)
        .send({ instruction: 'Eighth.' })
        .expect(201);
      expect(v8.body.version).toBe(8);
      const full = await t.http
        .get(`/v1/orgs/${orgId}/skills/${byOwner.id}`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(full.body.version).toBe(2);
      expect(
        full.body.versions.map(
          (version: { version: number; instruction: string }) => [
            version.version,
            version.instruction,
          ],
        ),
      ).toEqual([
        [1, 'Summarize.'],
        [2, 'Summarize, shorter.'],
      ]);

      // Tools: an admin sets them (none here: no tool is usable without a server).
      const tools = await t.http
        .put(`/v1/orgs/${orgId}/skills/${byAdmin.id}/tools`)
        .set('Cookie', admin.cookie)
        .send({ allowed_tools: [] })
        .expect(200);
      expect(tools.body).toEqual(
        expect.objectContaining({ id: byAdmin.id, allowed_tools: [] }),
      );

      const list = await t.http
        .get(`/v1/orgs/${orgId}/skills`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(list.body.data.map((skill: { id: string }) => skill.id)).toEqual([
        imported.body.id,
        byAdmin.id,
        byOwner.id,
      ]);

      // Deleting: the owner deletes the admin's Skill, the admin the owner's.
      await t.http
        .delete(`/v1/orgs/${orgId}/skills/${byAdmin.id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      await t.http
        .delete(`/v1/orgs/${orgId}/skills/${byOwner.id}`)
        .set('Cookie', admin.cookie)
        .expect(204);
      for (const id of [byAdmin.id, byOwner.id]) {
        await t.http
          .get(`/v1/orgs/${orgId}/skills/${id}`)
          .set('Cookie', owner.cookie)
          .expect(404);
        await t.http
          .delete(`/v1/orgs/${orgId}/skills/${id}`)
          .set('Cookie', owner.cookie)
          .expect(404);
      }
      const after = await t.http
        .get(`/v1/orgs/${orgId}/skills`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(after.body.data.map((skill: { id: string }) => skill.id)).toEqual([
        imported.body.id,
      ]);
      expect(await countOrgSkills(orgId)).toBe(1);
      const [versions] = await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM "SkillVersion" WHERE "skillId" = ANY($1::uuid[])`,
        [[byAdmin.id, byOwner.id]],
      );
      expect(versions.n).toBe(0);
    });

    it('pages the list newest first, with the same cursor rules as the personal list', async () => {
      const { orgId, owner, member } = await team();
      for (const name of ['one', 'two', 'three'])
        await createOrgSkill(owner, orgId, { name });
      const first = await t.http
        .get(`/v1/orgs/${orgId}/skills`)
        .query({ limit: 2 })
        .set('Cookie', member.cookie)
        .expect(200);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await t.http
        .get(`/v1/orgs/${orgId}/skills`)
        .query({ limit: 2, cursor: first.body.nextCursor })
        .set('Cookie', member.cookie)
        .expect(200);
      expect(second.body.nextCursor).toBeNull();
      expect(
        [...first.body.data, ...second.body.data].map(
          (skill: { name: string }) => skill.name,
        ),
      ).toEqual(['three', 'two', 'one']);
    });

    it('refuses id, owner_id, organization_id and allowed_tools on import, one by one and together, with 400 forbidden_field naming them, storing nothing', async () => {
      const { orgId, admin } = await team();
      const forbidden: Record<string, unknown> = {
        id: randomUUID(),
        owner_id: admin.id,
        organization_id: orgId,
        allowed_tools: ['files.search'],
      };
      for (const [field, value] of Object.entries(forbidden)) {
        const res = await t.http
          .post(`/v1/orgs/${orgId}/skills/import`)
          .set('Cookie', admin.cookie)
          .send({ ...portable, [field]: value });
        expect({ field, status: res.status, code: res.body.code }).toEqual({
          field,
          status: 400,
          code: 'forbidden_field',
        });
        expect(res.body.errors).toEqual([
          {
            field,
            code: 'forbidden_field',
            message: `${field} is not accepted on import`,
          },
        ]);
        expect(res.body.detail).toContain(field);
      }
      const together = await t.http
        .post(`/v1/orgs/${orgId}/skills/import`)
        .set('Cookie', admin.cookie)
        .send({ ...portable, ...forbidden });
      expect(together.status).toBe(400);
      expect(together.body.code).toBe('forbidden_field');
      expect(
        together.body.errors
          .map((error: { field: string }) => error.field)
          .sort(),
      ).toEqual(Object.keys(forbidden).sort());
      const emptyTools = await t.http
        .post(`/v1/orgs/${orgId}/skills/import`)
        .set('Cookie', admin.cookie)
        .send({ ...portable, allowed_tools: [] });
      expect(emptyTools.status).toBe(400);
      expect(emptyTools.body.code).toBe('forbidden_field');
      expect(await countOrgSkills(orgId)).toBe(0);
      expect(
        (
          await t.http
            .get(`/v1/orgs/${orgId}/skills`)
            .set('Cookie', admin.cookie)
            .expect(200)
        ).body.data,
      ).toEqual([]);
    });
  });

  describe('members and strangers', () => {
    it('a plain member lists, reads with versions, exports and runs, but gets 403 org_role_required for every write', async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createOrgSkill(owner, orgId);
      const asOwner = await t.http
        .get(`/v1/orgs/${orgId}/skills/${skill.id}`)
        .set('Cookie', owner.cookie)
        .expect(200);

      const writes = [
        t.http
          .post(`/v1/orgs/${orgId}/skills`)
          .send({ name: 'Mine now', instruction: 'x' }),
        t.http.post(`/v1/orgs/${orgId}/skills/import`).send(portable),
        t.http
          .post(`/v1/orgs/${orgId}/skills/${skill.id}/versions`)
          .send({ instruction: 'take over' }),
        t.http
          .put(`/v1/orgs/${orgId}/skills/${skill.id}/tools`)
          .send({ allowed_tools: [] }),
        t.http.delete(`/v1/orgs/${orgId}/skills/${skill.id}`),
      ];
      for (const call of writes) {
        const res = await call.set('Cookie', member.cookie);
        expect({
          route: `${call.method} ${call.url}`,
          status: res.status,
          code: res.body.code,
        }).toEqual({
          route: `${call.method} ${call.url}`,
          status: 403,
          code: 'org_role_required',
        });
      }

      const list = await t.http
        .get(`/v1/orgs/${orgId}/skills`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(list.body.data).toEqual([
        expect.objectContaining({ id: skill.id, version: 1 }),
      ]);
      const read = await t.http
        .get(`/v1/orgs/${orgId}/skills/${skill.id}`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(read.body).toEqual(asOwner.body);
      expect(read.body.versions).toHaveLength(1);
      const exported = await t.http
        .get(`/v1/orgs/${orgId}/skills/${skill.id}/export`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(exported.body).toEqual({
        name: 'Team summarizer',
        instruction: 'Summarize.',
        input_schema: null,
        output_schema: null,
        version: 1,
      });
      const run = await runOrgSkill(member, orgId, skill.id, runBody('hi'));
      expect(run.status).toBe(200);
      expect(run.body).toBe('Echo: hi');

      // Nothing the member tried to write was stored.
      expect(await countOrgSkills(orgId)).toBe(1);
      const unchanged = await t.http
        .get(`/v1/orgs/${orgId}/skills/${skill.id}`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(unchanged.body).toEqual(asOwner.body);
    });

    it('a role change applies to the very next write: a promoted member writes, a demoted admin is refused', async () => {
      const { orgId, owner, admin, member } = await team();
      await t.http
        .patch(`/v1/orgs/${orgId}/members/${member.id}`)
        .set('Cookie', owner.cookie)
        .send({ role: 'admin' })
        .expect(200);
      await t.http
        .patch(`/v1/orgs/${orgId}/members/${admin.id}`)
        .set('Cookie', owner.cookie)
        .send({ role: 'member' })
        .expect(200);
      const promoted = await createOrgSkill(member, orgId, {
        name: 'By the promoted',
      });
      const demoted = await t.http
        .post(`/v1/orgs/${orgId}/skills/${promoted.id}/versions`)
        .set('Cookie', admin.cookie)
        .send({ instruction: 'no longer allowed' })
        .expect(403);
      expect(demoted.body.code).toBe('org_role_required');
      await t.http
        .get(`/v1/orgs/${orgId}/skills/${promoted.id}`)
        .set('Cookie', admin.cookie)
        .expect(200);
      expect(await countOrgSkills(orgId)).toBe(1);
    });

    it('a non-member gets the same 404 as for an unknown organization on every route, even with a valid Skill id', async () => {
      const { orgId, owner } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createOrgSkill(owner, orgId);
      const stranger = await registerVerifiedUser(t.http);
      const bodies = new Set<string>();
      for (const org of [orgId, randomUUID()]) {
        const calls = [
          t.http.get(`/v1/orgs/${org}/skills`),
          t.http
            .post(`/v1/orgs/${org}/skills`)
            .send({ name: 'S', instruction: 'I' }),
          t.http.post(`/v1/orgs/${org}/skills/import`).send(portable),
          t.http.get(`/v1/orgs/${org}/skills/${skill.id}`),
          t.http.get(`/v1/orgs/${org}/skills/${skill.id}/export`),
          t.http
            .put(`/v1/orgs/${org}/skills/${skill.id}/tools`)
            .send({ allowed_tools: [] }),
          t.http
            .post(`/v1/orgs/${org}/skills/${skill.id}/versions`)
            .send({ instruction: 'take over' }),
          t.http.delete(`/v1/orgs/${org}/skills/${skill.id}`),
          t.http.post(`/v1/orgs/${org}/skills/${skill.id}/run`).send(runBody()),
        ];
        for (const call of calls) {
          const res = await call.set('Cookie', stranger.cookie);
          expect({
            route: `${call.method} ${call.url}`,
            status: res.status,
          }).toEqual({
            route: `${call.method} ${call.url}`,
            status: 404,
          });
          bodies.add(JSON.stringify({ ...res.body, requestId: undefined }));
        }
      }
      // A forbidden import field does not tell a stranger anything either.
      const forbiddenImport = await t.http
        .post(`/v1/orgs/${orgId}/skills/import`)
        .set('Cookie', stranger.cookie)
        .send({ ...portable, id: randomUUID() });
      expect(forbiddenImport.status).toBe(404);
      bodies.add(
        JSON.stringify({ ...forbiddenImport.body, requestId: undefined }),
      );
      expect([...bodies]).toHaveLength(1);

      expect(await countOrgSkills(orgId)).toBe(1);
      const unchanged = await t.http
        .get(`/v1/orgs/${orgId}/skills/${skill.id}`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(unchanged.body.versions).toHaveLength(1);
      expect(await chatRequestsOf(stranger.id)).toBe(0);
      expect(await poolOf(orgId)).toEqual({ used: 0, reserved: 0 });
    });

    it("one organization's Skill is 404 under another organization's path, even for an owner of both", async () => {
      const owner = await registerVerifiedUser(t.http);
      const first = await createOrg(owner, 'First');
      const second = await createOrg(owner, 'Second');
      await giveTeamPlan(first, 1);
      await giveTeamPlan(second, 1);
      const skill = await createOrgSkill(owner, second);
      const calls = [
        t.http.get(`/v1/orgs/${first}/skills/${skill.id}`),
        t.http.get(`/v1/orgs/${first}/skills/${skill.id}/export`),
        t.http
          .put(`/v1/orgs/${first}/skills/${skill.id}/tools`)
          .send({ allowed_tools: [] }),
        t.http
          .post(`/v1/orgs/${first}/skills/${skill.id}/versions`)
          .send({ instruction: 'moved' }),
        t.http.delete(`/v1/orgs/${first}/skills/${skill.id}`),
        t.http.post(`/v1/orgs/${first}/skills/${skill.id}/run`).send(runBody()),
      ];
      for (const call of calls) {
        const res = await call.set('Cookie', owner.cookie);
        expect({
          route: `${call.method} ${call.url}`,
          status: res.status,
        }).toEqual({
          route: `${call.method} ${call.url}`,
          status: 404,
        });
      }
      expect(
        (
          await t.http
            .get(`/v1/orgs/${first}/skills`)
            .set('Cookie', owner.cookie)
            .expect(200)
        ).body.data,
      ).toEqual([]);
      const unchanged = await t.http
        .get(`/v1/orgs/${second}/skills/${skill.id}`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(unchanged.body.versions).toHaveLength(1);
      expect(await poolOf(first)).toEqual({ used: 0, reserved: 0 });
      expect(await poolOf(second)).toEqual({ used: 0, reserved: 0 });
    });
  });

  describe('personal and shared Skills stay apart', () => {
    it('a personal Skill is 404 under the organization, an organization Skill 404 under /v1/skills, and GET /v1/skills lists no organization Skill', async () => {
      const owner = await registerVerifiedUser(t.http);
      const orgId = await createOrg(owner);
      await giveTeamPlan(orgId, 1);
      const personal = await createPersonalSkill(owner);
      const shared = await createOrgSkill(owner, orgId);

      const underOrg = [
        t.http.get(`/v1/orgs/${orgId}/skills/${personal.id}`),
        t.http.get(`/v1/orgs/${orgId}/skills/${personal.id}/export`),
        t.http
          .put(`/v1/orgs/${orgId}/skills/${personal.id}/tools`)
          .send({ allowed_tools: [] }),
        t.http
          .post(`/v1/orgs/${orgId}/skills/${personal.id}/versions`)
          .send({ instruction: 'shared now' }),
        t.http.delete(`/v1/orgs/${orgId}/skills/${personal.id}`),
        t.http
          .post(`/v1/orgs/${orgId}/skills/${personal.id}/run`)
          .send(runBody()),
      ];
      const underPersonal = [
        t.http.get(`/v1/skills/${shared.id}`),
        t.http.get(`/v1/skills/${shared.id}/export`),
        t.http.put(`/v1/skills/${shared.id}/tools`).send({ allowed_tools: [] }),
        t.http
          .post(`/v1/skills/${shared.id}/versions`)
          .send({ instruction: 'personal now' }),
        t.http.post(`/v1/skills/${shared.id}/run`).send(runBody()),
      ];
      for (const call of [...underOrg, ...underPersonal]) {
        const res = await call.set('Cookie', owner.cookie);
        expect({
          route: `${call.method} ${call.url}`,
          status: res.status,
        }).toEqual({
          route: `${call.method} ${call.url}`,
          status: 404,
        });
      }

      const personalList = await t.http
        .get('/v1/skills')
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(
        personalList.body.data.map((skill: { id: string }) => skill.id),
      ).toEqual([personal.id]);
      const orgList = await t.http
        .get(`/v1/orgs/${orgId}/skills`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(
        orgList.body.data.map((skill: { id: string }) => skill.id),
      ).toEqual([shared.id]);
      for (const [path, id] of [
        [`/v1/skills/${personal.id}`, personal.id],
        [`/v1/orgs/${orgId}/skills/${shared.id}`, shared.id],
      ]) {
        const res = await t.http
          .get(path)
          .set('Cookie', owner.cookie)
          .expect(200);
        expect(res.body).toEqual(
          expect.objectContaining({ id, version: 1, allowed_tools: [] }),
        );
        expect(res.body.versions).toHaveLength(1);
      }
      expect(await chatRequestsOf(owner.id)).toBe(0);
    });

    it('brings a personal Skill to the team: export from /v1/skills, import under the organization, identical export', async () => {
      const { orgId, owner, admin, member } = await team();
      const personal = await createPersonalSkill(admin, {
        name: 'Translator',
        instruction: 'Translate.',
        input_schema: inputSchema,
        output_schema: { type: 'string' },
      });
      await t.http
        .post(`/v1/skills/${personal.id}/versions`)
        .set('Cookie', admin.cookie)
        .send({
          instruction: 'Translate, carefully.',
          input_schema: inputSchema,
          output_schema: { type: 'string', minLength: 1 },
        })
        .expect(201);
      const personalExport = await t.http
        .get(`/v1/skills/${personal.id}/export`)
        .set('Cookie', admin.cookie)
        .expect(200);
      expect(personalExport.body).toEqual({
        name: 'Translator',
        instruction: 'Translate, carefully.',
        input_schema: inputSchema,
        output_schema: { type: 'string', minLength: 1 },
        version: 2,
      });

      const imported = await t.http
        .post(`/v1/orgs/${orgId}/skills/import`)
        .set('Cookie', admin.cookie)
        .send(personalExport.body)
        .expect(201);
      expect(imported.body).toEqual(
        expect.objectContaining({
          owner_id: admin.id,
          organization_id: orgId,
          allowed_tools: [],
          version: 2,
        }),
      );
      expect(imported.body.id).not.toBe(personal.id);
      const orgExport = await t.http
        .get(`/v1/orgs/${orgId}/skills/${imported.body.id}/export`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(JSON.stringify(orgExport.body)).toBe(
        JSON.stringify(personalExport.body),
      );
      const validate = new Ajv2020({
        allErrors: true,
        allowUnionTypes: true,
      }).compile(exportSchema);
      expect(validate(orgExport.body)).toBe(true);

      // The personal Skill stays the admin's alone; the team sees the copy.
      await t.http
        .get(`/v1/skills/${personal.id}`)
        .set('Cookie', admin.cookie)
        .expect(200);
      await t.http
        .get(`/v1/skills/${personal.id}`)
        .set('Cookie', owner.cookie)
        .expect(404);
      const adminPersonal = await t.http
        .get('/v1/skills')
        .set('Cookie', admin.cookie)
        .expect(200);
      expect(
        adminPersonal.body.data.map((skill: { id: string }) => skill.id),
      ).toEqual([personal.id]);
      const orgList = await t.http
        .get(`/v1/orgs/${orgId}/skills`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(
        orgList.body.data.map((skill: { id: string }) => skill.id),
      ).toEqual([imported.body.id]);
      // The next version the team publishes is n+1 of the imported number.
      const next = await t.http
        .post(`/v1/orgs/${orgId}/skills/${imported.body.id}/versions`)
        .set('Cookie', owner.cookie)
        .send({ instruction: 'Team version.' })
        .expect(201);
      expect(next.body.version).toBe(3);
    });
  });

  describe('runs', () => {
    it("applies the member's daily cap and the pool's limit to Skill runs (429 quota_exceeded), billing nothing more", async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createOrgSkill(owner, orgId);
      await t.http
        .patch(`/v1/orgs/${orgId}/members/${member.id}`)
        .set('Cookie', owner.cookie)
        .send({ dailyCreditLimit: 1 })
        .expect(200);
      expect(
        (await runOrgSkill(member, orgId, skill.id, runBody())).status,
      ).toBe(200);
      const capped = await runOrgSkill(member, orgId, skill.id, runBody());
      expect(capped.status).toBe(429);
      expect(problemOf(capped).code).toBe('quota_exceeded');
      expect(capped.headers['retry-after']).toBeDefined();
      expect(await memberShareOf(orgId, member.id)).toEqual({
        used: 1,
        reserved: 0,
      });
      // The owner has no cap: the pool still pays, until it is spent.
      expect(
        (await runOrgSkill(owner, orgId, skill.id, runBody())).status,
      ).toBe(200);
      const quota = await t.http
        .get(`/v1/orgs/${orgId}/quota`)
        .set('Cookie', owner.cookie)
        .expect(200);
      const limit = quota.body.pool.limit as number;
      expect(quota.body.pool.used).toBe(2);
      await sql(
        `UPDATE "OrgDailyUsage" SET used = $2 WHERE "organizationId" = $1 AND day = $3::date`,
        [orgId, limit, today()],
      );
      const spent = await runOrgSkill(owner, orgId, skill.id, runBody());
      expect(spent.status).toBe(429);
      expect(problemOf(spent).code).toBe('quota_exceeded');
      expect(await poolOf(orgId)).toEqual({ used: limit, reserved: 0 });
      expect(await ledgerOf(member.id)).toHaveLength(1);
      expect(await ledgerOf(owner.id)).toHaveLength(1);
      expect(await personalUsageOf(member.id)).toBe(0);
      expect(await personalUsageOf(owner.id)).toBe(0);
    });

    it('takes the organization id in the path in any letter case: naming it in the body is no mismatch, and a retry through it replays', async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createOrgSkill(owner, orgId);
      const upper = orgId.toUpperCase();
      // The path in upper case is the same organization on every route.
      const list = await t.http
        .get(`/v1/orgs/${upper}/skills`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(list.body.data).toEqual([
        expect.objectContaining({ id: skill.id }),
      ]);
      const named = await runOrgSkill(
        member,
        upper,
        skill.id,
        runBody('named', { organizationId: orgId }),
      );
      expect({ status: named.status, body: named.body }).toEqual({
        status: 200,
        body: 'Echo: named',
      });
      const body = runBody('retried');
      expect((await runOrgSkill(member, orgId, skill.id, body)).status).toBe(
        200,
      );
      const retry = await runOrgSkill(member, upper, skill.id, body);
      expect({
        status: retry.status,
        replayed: retry.headers['idempotent-replayed'],
      }).toEqual({ status: 200, replayed: 'true' });
      expect(await poolOf(orgId)).toEqual({ used: 2, reserved: 0 });
    });

    it("a member's run bills the pool (not their personal quota) with a ledger entry naming the organization and the Skill", async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createOrgSkill(owner, orgId);
      const res = await runOrgSkill(
        member,
        orgId,
        skill.id,
        runBody('pool please'),
      );
      expect(res.status).toBe(200);
      expect(res.body).toBe('Echo: pool please');

      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });
      expect(await memberShareOf(orgId, member.id)).toEqual({
        used: 1,
        reserved: 0,
      });
      expect(await personalUsageOf(member.id)).toBe(0);
      expect(await ledgerOf(member.id)).toEqual([
        {
          kind: 'usage',
          status: 'completed',
          organizationId: orgId,
          skillId: skill.id,
          credits: 1,
        },
      ]);
      const personalQuota = await t.http
        .get('/v1/billing/quota')
        .set('Cookie', member.cookie)
        .expect(200);
      expect(personalQuota.body.used).toBe(0);
      const quota = await t.http
        .get(`/v1/orgs/${orgId}/quota`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(quota.body).toMatchObject({
        pool: { used: 1, reserved: 0 },
        member: { used: 1, reserved: 0 },
      });

      // The conversation is the member's, and keeps its messages once the Skill is deleted.
      const conversationId = res.headers['x-conversation-id'] as string;
      await t.http
        .delete(`/v1/orgs/${orgId}/skills/${skill.id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      const conversation = await t.http
        .get(`/v1/conversations/${conversationId}`)
        .set('Cookie', member.cookie)
        .expect(200);
      expect(
        conversation.body.messages.map((m: { content: string }) => m.content),
      ).toEqual(['pool please', 'Echo: pool please']);
      await t.http
        .get(`/v1/conversations/${conversationId}`)
        .set('Cookie', owner.cookie)
        .expect(404);
    });

    it('replays the same idempotencyKey without billing twice; the same key with another input is 422 idempotency_key_reused', async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createOrgSkill(owner, orgId);
      const body = runBody('once');
      const first = await runOrgSkill(member, orgId, skill.id, body);
      expect(first.status).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const retry = await runOrgSkill(member, orgId, skill.id, body);
      expect(retry.status).toBe(200);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toBe(first.body);
      expect(retry.headers['x-conversation-id']).toBe(
        first.headers['x-conversation-id'],
      );
      expect(await ledgerOf(member.id)).toHaveLength(1);
      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });

      const reused = await runOrgSkill(member, orgId, skill.id, {
        ...body,
        input: 'twice',
      });
      expect(reused.status).toBe(422);
      expect(problemOf(reused).code).toBe('idempotency_key_reused');
      // The same key naming the organization in the body is the same request (the pool pays either way).
      const named = await runOrgSkill(member, orgId, skill.id, {
        ...body,
        organizationId: orgId,
      });
      expect(named.status).toBe(200);
      expect(named.headers['idempotent-replayed']).toBe('true');
      // The same key on the personal route of the same Skill id is another request (the key is looked up
      // before the Skill): refused as a reused key, nothing billed.
      const personal = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        member.cookie,
        body,
      ).response;
      expect(personal.status).toBe(422);
      expect(problemOf(personal).code).toBe('idempotency_key_reused');
      expect(await ledgerOf(member.id)).toHaveLength(1);
      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });
      expect(await personalUsageOf(member.id)).toBe(0);
    });

    it('refuses input that does not match the input_schema with 422, billing nothing and leaving the key free', async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createOrgSkill(owner, orgId, {
        input_schema: inputSchema,
      });
      const key = randomUUID();
      for (const input of [{ text: '' }, { other: 1 }, 'just a string']) {
        const res = await runOrgSkill(member, orgId, skill.id, {
          ...runBody(input),
          idempotencyKey: key,
        });
        expect(res.status).toBe(422);
        const problem = problemOf(res);
        expect(problem.code).toBe('input_invalid');
        expect(problem.errors?.[0].field).toMatch(/^input/);
      }
      expect(await chatRequestsOf(member.id)).toBe(0);
      expect(await ledgerOf(member.id)).toEqual([]);
      expect(await poolOf(orgId)).toEqual({ used: 0, reserved: 0 });
      expect(await memberShareOf(orgId, member.id)).toEqual({
        used: 0,
        reserved: 0,
      });
      expect(await personalUsageOf(member.id)).toBe(0);
      const ok = await runOrgSkill(member, orgId, skill.id, {
        ...runBody({ text: 'fine' }),
        idempotencyKey: key,
      });
      expect(ok.status).toBe(200);
      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });
    });

    it('refuses runs of an organization without a paid plan (403 org_plan_required), billing nothing', async () => {
      const { orgId, owner, member } = await team();
      const skill = await createOrgSkill(owner, orgId);
      for (const who of [owner, member]) {
        const res = await runOrgSkill(who, orgId, skill.id, runBody());
        expect(res.status).toBe(403);
        expect(problemOf(res).code).toBe('org_plan_required');
        expect(await personalUsageOf(who.id)).toBe(0);
        expect(await ledgerOf(who.id)).toEqual([]);
      }
      expect(await poolOf(orgId)).toEqual({ used: 0, reserved: 0 });
      // The refusal kept nothing: once the organization pays, the same kind of run goes through.
      await giveTeamPlan(orgId, 3);
      expect(
        (await runOrgSkill(member, orgId, skill.id, runBody())).status,
      ).toBe(200);
      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });
    });

    it('refuses a body organizationId naming another organization with 400, billing neither', async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const otherOrg = await createOrg(member, 'Member’s own');
      await giveTeamPlan(otherOrg, 1);
      const skill = await createOrgSkill(owner, orgId);
      for (const organizationId of [otherOrg, randomUUID()]) {
        const res = await runOrgSkill(
          member,
          orgId,
          skill.id,
          runBody('hi', { organizationId }),
        );
        expect(res.status).toBe(400);
        expect(problemOf(res).errors?.map((error) => error.field)).toContain(
          'organizationId',
        );
      }
      expect(await chatRequestsOf(member.id)).toBe(0);
      expect(await poolOf(orgId)).toEqual({ used: 0, reserved: 0 });
      expect(await poolOf(otherOrg)).toEqual({ used: 0, reserved: 0 });
      // Naming the Skill's own organization is allowed, and bills it.
      const same = await runOrgSkill(
        member,
        orgId,
        skill.id,
        runBody('hi', { organizationId: orgId }),
      );
      expect(same.status).toBe(200);
      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });
      expect(await poolOf(otherOrg)).toEqual({ used: 0, reserved: 0 });
    });

    it('a personal Skill run naming organizationId bills that pool; without it, the personal quota', async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createPersonalSkill(member);
      const pooled = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        member.cookie,
        runBody('on the team', { organizationId: orgId }),
      ).response;
      expect(pooled.status).toBe(200);
      expect(pooled.body).toBe('Echo: on the team');
      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });
      expect(await memberShareOf(orgId, member.id)).toEqual({
        used: 1,
        reserved: 0,
      });
      expect(await personalUsageOf(member.id)).toBe(0);
      expect(await ledgerOf(member.id)).toEqual([
        expect.objectContaining({ organizationId: orgId, skillId: skill.id }),
      ]);

      const own = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        member.cookie,
        runBody('on me'),
      ).response;
      expect(own.status).toBe(200);
      expect(await personalUsageOf(member.id)).toBe(1);
      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });
      expect((await ledgerOf(member.id))[1]).toEqual(
        expect.objectContaining({ organizationId: null, skillId: skill.id }),
      );

      // Someone else's organization, or one without a plan, is refused as on /v1/chat.
      const strangerOrg = await createOrg(
        await registerVerifiedUser(t.http),
        'Elsewhere',
      );
      await giveTeamPlan(strangerOrg, 1);
      const notMine = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        member.cookie,
        runBody('hi', { organizationId: strangerOrg }),
      ).response;
      expect(notMine.status).toBe(404);
      const unpaid = await createOrg(member, 'Unpaid');
      const noPlan = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        member.cookie,
        runBody('hi', { organizationId: unpaid }),
      ).response;
      expect(noPlan.status).toBe(403);
      expect(problemOf(noPlan).code).toBe('org_plan_required');
      expect(await ledgerOf(member.id)).toHaveLength(2);
      expect(await poolOf(strangerOrg)).toEqual({ used: 0, reserved: 0 });
      expect(await ledgerOf(owner.id)).toEqual([]);
    });

    it("a removed member's run is 404 (nothing billed), and so are their reads", async () => {
      const { orgId, owner, member } = await team();
      await giveTeamPlan(orgId, 3);
      const skill = await createOrgSkill(owner, orgId);
      const first = runBody('before');
      expect((await runOrgSkill(member, orgId, skill.id, first)).status).toBe(
        200,
      );
      await t.http
        .delete(`/v1/orgs/${orgId}/members/${member.id}`)
        .set('Cookie', owner.cookie)
        .expect(204);
      const refused = await runOrgSkill(member, orgId, skill.id, runBody());
      expect(refused.status).toBe(404);
      // Their earlier run is still theirs: a retry replays it, billing nothing.
      const replayed = await runOrgSkill(member, orgId, skill.id, first);
      expect(replayed.status).toBe(200);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      for (const path of [
        `/v1/orgs/${orgId}/skills`,
        `/v1/orgs/${orgId}/skills/${skill.id}`,
        `/v1/orgs/${orgId}/skills/${skill.id}/export`,
      ])
        await t.http.get(path).set('Cookie', member.cookie).expect(404);
      // A personal Skill of theirs cannot bill the organization any more either.
      const personal = await createPersonalSkill(member);
      const viaPersonal = await post(
        base,
        `/v1/skills/${personal.id}/run`,
        member.cookie,
        runBody('hi', { organizationId: orgId }),
      ).response;
      expect(viaPersonal.status).toBe(404);
      expect(await poolOf(orgId)).toEqual({ used: 1, reserved: 0 });
      expect(await ledgerOf(member.id)).toHaveLength(1);
      expect(await personalUsageOf(member.id)).toBe(0);
    });
  });
});
